"""jax.numpy.linalg's factorizations over spmd::numpy::linalg (spmd/linalg.h): cholesky and qr
(mode "reduced"), spmd.numpy.linalg."""
from typing import NamedTuple

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
    positive definite, as JAX's.
    symmetrize_input=False is accepted and symmetrizes all the same (the factor of a symmetric
    input is the same)."""
    _matrices("cholesky", a, square=True)
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


__all__ = ["cholesky", "qr", "QRResult"]
