"""spmd.nn: jax.nn's activations and normalisers over spmd.numpy, each composed as jax.nn composes
it (so with JAX's rounding), with JAX's values and derivatives at the edges (relu's is 0 at 0;
logsumexp of a row of -inf is -inf). spmd.nn.initializers holds the initializers."""
import operator as _operator

import numpy as _np

from . import _spmd
from .numpy import _name_ops, _op, _over

_t = _spmd.tnp


def _softmax(x, axis=-1):
    """jax.nn.softmax over `axis`: an int, a tuple of them, None (every axis) or () (none: each
    element alone, 1 where it is finite)."""
    b, axes = _over(x, axis)
    out = _t.softmax(b, axes)
    return out if b is x else _t.squeeze(out, [0])


def _logsumexp(a, axis=None, keepdims=False):
    """jax.nn.logsumexp; over no elements it is -inf, as JAX's."""
    b, axes = _over(a, axis)
    return _t.logsumexp(b, axes, keepdims and b is a)


def _inexact(x):
    """JAX's promote_args_inexact: an integer or bool operand in the default float."""
    kind = x.dtype
    if kind.kind == "f" or kind.name == "bfloat16":
        return x
    return _t.astype(x, "float64" if _spmd._x64_enabled() else "float32")


def _gelu(x, approximate=True):
    """jax.nn.gelu. approximate: x * 0.5 (1 + tanh(√(2/π) (x + 0.044715 x³))), JAX's grouping;
    exact: 0.5 x erfc(-x √½)."""
    x = _inexact(x)
    name = x.dtype.name
    if approximate:
        c = _t.full([], float(_np.sqrt(2 / _np.pi).astype(_np.float32 if name != "float64"
                                                          else _np.float64)), name)
        cdf = 0.5 * (1.0 + _t.tanh(c * (x + 0.044715 * (x * (x * x)))))
        return x * cdf
    half = _t.full([], float(_np.sqrt(0.5)), name)
    return 0.5 * x * _t.erfc(-x * half)


def _silu(x):
    x = _inexact(x)
    return x * _t.logistic(x)


def _log_softmax(x, axis=-1):
    """jax.nn.log_softmax: x - max, less the log of the sum of its exponentials (the max's
    gradient stopped, as JAX's)."""
    x = _inexact(x)
    b, axes = _over(x, axis)
    shifted = b - _spmd.stop_gradient(_t.max(b, axes, True))
    out = shifted - _t.log(_t.sum(_t.exp(shifted), axes, True))
    return out if b is x else _t.squeeze(out, [0])


def _standardize(x, axis=-1, mean=None, variance=None, epsilon=1e-5, where=None):
    """jax.nn.standardize: (x - mean) * rsqrt(variance + epsilon), the variance as
    mean(x²) - mean², as JAX computes it."""
    if where is not None:
        raise NotImplementedError("spmd.nn.standardize: where= is not yet supported")
    x = _inexact(x)
    b, axes = _over(x, axis)
    if mean is None:
        mean = _t.mean(b, axes, True)
    if variance is None:
        variance = _t.mean(b * b, axes, True) - mean * mean
    out = (b - mean) * _t.rsqrt(variance + epsilon)
    return out if b is x else _t.squeeze(out, [0])


def _one_hot(x, num_classes, dtype=None, axis=-1):
    """jax.nn.one_hot: x[..., None] == arange(num_classes), as `dtype` (the default float); an
    index outside [0, num_classes) is a row of zeros. A floating x compares as it is (JAX
    deprecates it, with a warning)."""
    n = _operator.index(num_classes)
    rank = len(x.shape) + 1
    axis = _operator.index(axis)
    if not -rank <= axis < rank:
        raise ValueError(f"one_hot: axis {axis} is out of bounds for a result of rank {rank}")
    axis %= rank
    shape = [1] * rank
    shape[axis] = n
    classes = _t.reshape(_t.arange(n, "int32"), shape)
    hot = _t.equal(_t.expand_dims(x, axis), classes)
    return _t.astype(hot, dtype or ("float64" if _spmd._x64_enabled() else "float32"))


relu = _op(lambda x: _t.relu(x))
sigmoid = _op(lambda x: _t.logistic(x))  # jax.nn.sigmoid is lax.logistic
softmax = _op(_softmax)
logsumexp = _op(_logsumexp)
gelu = _op(_gelu)
silu = swish = _op(_silu)
log_softmax = _op(_log_softmax)
standardize = _op(_standardize, arrays=(0,))
_one_hot_op = _op(_one_hot, arrays=(0,))


def one_hot(x, num_classes, *, dtype=None, axis=-1):
    kind = _np.dtype(getattr(x, "dtype", None) or _np.asarray(x).dtype)
    if kind.kind not in "iu":
        import warnings
        warnings.warn(f"jax.nn.one_hot input should be integer-typed; got dtype={kind}",
                      DeprecationWarning, stacklevel=2)
    return _one_hot_op(x, num_classes, dtype=None if dtype is None else _dtype_key(dtype),
                       axis=axis)


def _dtype_key(dtype):
    from ._core import dtype_name
    return dtype_name(dtype)


_name_ops(globals(), "spmd.nn")

from . import initializers  # noqa: E402,F401 - jax.nn.initializers
