"""jax.Array's methods on spmd's Arrays and traced values: x.sum(), x.astype(), x.reshape(),
x.T, x.at[...] and the others below, each the spmd.numpy function of the same name; a traced
value's x[...] (_indexing.py)."""
from . import _at, _indexing
from . import numpy as jnp
from ._core import Array, Tensor


def _reshape(x, *shape, order="C"):
    if order != "C":
        raise NotImplementedError("reshape: order='C' only")
    return jnp.reshape(x, shape[0] if len(shape) == 1 and not isinstance(shape[0], int)
                       else shape)


def _transpose(x, *axes):
    return jnp.transpose(x, axes[0] if len(axes) == 1 and not isinstance(axes[0], int)
                         else (axes or None))


_METHODS = {
    "astype": jnp.astype, "sum": jnp.sum, "mean": jnp.mean, "max": jnp.max, "min": jnp.min,
    "prod": jnp.prod, "var": jnp.var, "std": jnp.std, "argmax": jnp.argmax,
    "argmin": jnp.argmin, "all": jnp.all, "any": jnp.any, "cumsum": jnp.cumsum,
    "cumprod": jnp.cumprod, "clip": jnp.clip, "round": jnp.round, "dot": jnp.dot,
    "take": jnp.take, "swapaxes": jnp.swapaxes, "squeeze": jnp.squeeze, "ravel": jnp.ravel,
    "flatten": jnp.ravel, "reshape": _reshape, "transpose": _transpose, "sort": jnp.sort,
    "argsort": jnp.argsort, "nonzero": jnp.nonzero, "compress": lambda x, condition, *a, **k:
    jnp.compress(condition, x, *a, **k), "searchsorted": jnp.searchsorted, "ptp": jnp.ptp,
    "diagonal": jnp.diagonal, "trace": jnp.trace, "repeat": jnp.repeat, "conj": jnp.conj,
}


def _bind():
    for cls in (Array, Tensor):
        for name, fn in _METHODS.items():
            setattr(cls, name, fn)
        cls.T = property(lambda x: jnp.transpose(x))
        cls.at = property(_at.at)
    # An Array's len, iteration and indexing are _core's (NumPy's indexing of its host value,
    # boolean masks included); a traced value's are these.
    Tensor.__getitem__ = _indexing.getitem
    Tensor.__len__ = _len
    Tensor.__iter__ = _iter


def _len(x):
    if not x.shape:
        raise TypeError("len() of unsized object")
    return x.shape[0]


def _iter(x):
    if not x.shape:
        raise TypeError("iteration over a 0-d array")
    return (x[i] for i in range(x.shape[0]))


_bind()
