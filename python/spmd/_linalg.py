"""spmd.numpy.linalg: jax.numpy.linalg's factorizations over spmd::numpy::linalg (spmd/linalg.h),
cholesky and qr (mode "reduced"), and its norms composed as JAX composes them."""
import operator
from typing import NamedTuple

import numpy as np

from . import _spmd
from . import numpy as jnp

_t = _spmd.tnp


class QRResult(NamedTuple):
    Q: object
    R: object


_cholesky = jnp._op(lambda a, upper=False: _t.cholesky(a, upper))
_cholesky.public_name = "spmd.numpy.linalg.cholesky"
_q_and_r = jnp._op(lambda a: _t.qr(a))
_q_and_r.public_name = "spmd.numpy.linalg.qr"


def cholesky(a, *, upper=False, symmetrize_input=True):
    """jnp.linalg.cholesky: the lower factor (upper=True: its transpose) of each matrix of a's
    last two dimensions, a symmetrized first; NaN on and below the diagonal where one is not
    positive definite, as JAX's. With symmetrize_input=False only the lower triangle is read,
    as LAPACK's potrf reads it: the matrix is rebuilt from it, symmetric, so the kernel's own
    symmetrization leaves it unchanged."""
    _matrices("cholesky", a, square=True)
    if not symmetrize_input:
        a = jnp.asarray(a)
        a = jnp.tril(a) + jnp.swapaxes(jnp.tril(a, -1), -1, -2)
    return _cholesky(a, upper=bool(upper))


def _matrices(name, a, square=False):
    """JAX's TypeError for an operand that is not a stack of (square) matrices."""
    shape = jnp.shape(a)
    if len(shape) < 2:
        raise TypeError(f"Input 0 to {name} must have rank at least 2, but got shape={shape}")
    if square and shape[-1] != shape[-2]:
        raise TypeError(f"{name}: the matrices must be square, but got shape={shape}")


def qr(a, mode="reduced"):
    """jnp.linalg.qr in mode "reduced" (Q, R) or "r" (R alone)."""
    if mode not in ("reduced", "r"):
        raise NotImplementedError(f"spmd.numpy.linalg.qr: mode {mode!r}; spmd has 'reduced' "
                                  "and 'r'")
    _matrices("qr", a)
    q, r = _q_and_r(a)
    return r if mode == "r" else QRResult(q, r)


def _squares(x, axis, keepdims):
    return jnp.sqrt(jnp.sum(x * x, axis=axis, keepdims=keepdims))


def vector_norm(x, ord=2, axis=None, keepdims=False):  # noqa: A002 - JAX's name
    """jnp.linalg.vector_norm, composed as JAX composes it."""
    x = _inexact(x)
    if ord is None or ord == 2:
        return _squares(x, axis, keepdims)
    if ord == np.inf:
        return jnp.max(jnp.abs(x), axis=axis, keepdims=keepdims)
    if ord == -np.inf:
        return jnp.min(jnp.abs(x), axis=axis, keepdims=keepdims)
    if ord == 0:
        return jnp.sum(x != 0, axis=axis, keepdims=keepdims, dtype=jnp.result_type(x))
    if ord == 1:
        return jnp.sum(jnp.abs(x), axis=axis, keepdims=keepdims)
    if isinstance(ord, str):
        raise ValueError(f"Invalid order '{ord}' for vector norm.")
    dtype = jnp.result_type(x)
    power = jnp.asarray(ord, dtype)
    total = jnp.sum(jnp.abs(x) ** power, axis=axis, keepdims=keepdims)
    return total ** (jnp.asarray(1, dtype) / power)


def _inexact(x):
    x = jnp.asarray(x)
    kind = np.dtype(jnp.result_type(x))
    return x if kind.kind == "f" or kind.name == "bfloat16" else jnp.astype(x, jnp.float32)


def norm(x, ord=None, axis=None, keepdims=False):  # noqa: A002 - JAX's name
    """jnp.linalg.norm: vector norms over one axis, matrix norms over two ('fro', 1, -1, inf,
    -inf), the flattened 2-norm with neither; the SVD's norms (2, -2, 'nuc') are not here."""
    x = _inexact(x)
    ndim = len(jnp.shape(x))
    if axis is None:
        if ord is None:
            return _squares(x, None, keepdims)
        axis = tuple(range(ndim))
    axes = tuple(operator.index(a) for a in axis) if isinstance(axis, tuple) else \
        (operator.index(axis),)
    for a in axes:
        if not -ndim <= a < ndim:
            raise ValueError(f"axis {a} is out of bounds for array of dimension {ndim}")
    axes = tuple(a % ndim for a in axes)
    if len(axes) == 1:
        return vector_norm(x, 2 if ord is None else ord, axes, keepdims)
    if len(axes) != 2:
        raise ValueError(f"Invalid axis values ({axis}) for jnp.linalg.norm.")
    row, col = axes
    if ord is None or ord in ("f", "fro"):
        return _squares(x, axes, keepdims)
    if ord in (1, -1, np.inf, -np.inf):
        inner, outer = (row, col) if ord in (1, -1) else (col, row)
        if not keepdims and outer > inner:
            outer -= 1
        pick = jnp.max if ord in (1, np.inf) else jnp.min
        out = pick(jnp.sum(jnp.abs(x), axis=inner, keepdims=keepdims), axis=outer,
                   keepdims=keepdims)
        return out
    if ord in (2, -2, "nuc"):
        raise NotImplementedError(f"spmd.numpy.linalg.norm: ord={ord!r} needs a singular value "
                                  "decomposition, which spmd does not have yet")
    raise ValueError(f"Invalid order '{ord}' for matrix norm.")


__all__ = ["cholesky", "qr", "QRResult", "norm", "vector_norm"]
