"""jnp.poly, polyadd, polysub, polymul, polyder, polyint and polydiv: polynomials as 1-D
coefficient arrays, the highest power first, composed as jax.numpy composes them (so their
rounding is JAX's; polymul and poly by jnp.convolve)."""
import operator

import numpy as np

from . import _arguments
from . import numpy as jnp


def _promoted(name, *arrays, inexact=False):
    _arguments.check_arraylike(name, *arrays)
    dtype = jnp.result_type(*arrays)
    if inexact and not jnp.issubdtype(dtype, jnp.inexact):
        dtype = jnp.result_type(dtype, float)
    return [jnp.asarray(a, dtype) for a in arrays]


def _order(m, name):
    """m as a concrete int (JAX's ConcretizationTypeError for a traced one)."""
    return operator.index(_arguments.concrete(m, f"'m' argument of jnp.{name}"))


def polyadd(a1, a2):
    """jnp.polyadd: the shorter polynomial added into the longer one's last coefficients."""
    a1, a2 = _promoted("polyadd", a1, a2)
    if a2.shape[0] <= a1.shape[0]:
        return a1.at[a1.shape[0] - a2.shape[0]:].add(a2)
    return a2.at[a2.shape[0] - a1.shape[0]:].add(a1)


def polysub(a1, a2):
    """jnp.polysub: polyadd(a1, -a2)."""
    a1, a2 = _promoted("polysub", a1, a2)
    return polyadd(a1, -a2)


def polyder(p, m=1):
    """jnp.polyder: the m-th derivative, each coefficient times the product of its m falling
    powers."""
    (p,) = _promoted("polyder", p, inexact=True)
    m = _order(m, "polyder")
    if m < 0:
        raise ValueError("Order of derivative must be positive")
    if m == 0:
        return p
    n = p.shape[0]
    powers = jnp.arange(m, n, dtype=p.dtype)[np.newaxis] - \
        jnp.arange(m, dtype=p.dtype)[:, np.newaxis]
    return p[:n - m] * jnp.prod(powers, axis=0)[::-1]


def polyint(p, m=1, k=None):
    """jnp.polyint: the m-th antiderivative, integration constants k (a scalar, or one per
    order) as its last coefficients."""
    m = _order(m, "polyint")
    p, k = _promoted("polyint", p, 0 if k is None else k, inexact=True)
    if m < 0:
        raise ValueError("Order of integral must be positive (see polyder)")
    k = jnp.atleast_1d(k)
    if k.shape[0] == 1:
        k = jnp.full((m,), k[0], dtype=k.dtype)
    if tuple(k.shape) != (m,):
        raise ValueError("k must be a scalar or a rank-1 array of length 1 or m.")
    if m == 0:
        return p
    grid = jnp.arange(p.shape[0] + m, dtype=p.dtype)[np.newaxis] - \
        jnp.arange(m, dtype=p.dtype)[:, np.newaxis]
    divisors = jnp.prod(jnp.maximum(1, grid), axis=0)[::-1]
    return jnp.true_divide(jnp.concatenate((p, k)), divisors)


def polydiv(u, v, *, trim_leading_zeros=False):
    """jnp.polydiv: (quotient, remainder) by long division, the remainder as long as u (its
    leading zeros kept unless trim_leading_zeros, which needs concrete values)."""
    u, v = _promoted("polydiv", u, v, inexact=True)
    m, n = u.shape[0] - 1, v.shape[0] - 1
    scale = 1.0 / v[0]
    q = jnp.zeros(max(m - n + 1, 1), dtype=u.dtype)
    for i in range(m - n + 1):
        d = scale * u[i]
        q = q.at[i].set(d)
        u = u.at[i:i + n + 1].add(-d * v)
    if trim_leading_zeros:
        values = _arguments.concrete(u, "u, for polydiv's trim_leading_zeros")
        tol = np.sqrt(np.finfo(values.dtype).eps)
        big = np.flatnonzero(np.abs(values) >= tol)
        u = u[big[0]:] if big.size else u[:0]
    return q, u


def polymul(a1, a2, *, trim_leading_zeros=False):
    """jnp.polymul: the product's coefficients, a convolution (leading zeros trimmed first if
    asked, which needs concrete values); an empty polynomial is 0."""
    a1, a2 = _promoted("polymul", a1, a2, inexact=True)
    if trim_leading_zeros and (a1.shape[0] > 1 or a2.shape[0] > 1):
        a1, a2 = jnp.trim_zeros(a1, trim="f"), jnp.trim_zeros(a2, trim="f")
    if a1.shape[0] == 0:
        a1 = jnp.zeros(1, dtype=a2.dtype)
    if a2.shape[0] == 0:
        a2 = jnp.zeros(1, dtype=a1.dtype)
    return jnp.convolve(a1, a2, mode="full")


def poly(seq_of_zeros):
    """jnp.poly: the monic polynomial with these roots, one convolution by (1, -root) per root.
    A square matrix's eigenvalues (JAX's jnp.linalg.eigvals) are not supported yet."""
    (roots,) = _promoted("poly", seq_of_zeros, inexact=True)
    roots = jnp.atleast_1d(roots)
    if roots.ndim == 2 and roots.shape[0] == roots.shape[1] and roots.shape[0] != 0:
        raise NotImplementedError("spmd.numpy.poly of a square matrix needs its eigenvalues "
                                  "(jnp.linalg.eigvals), which spmd does not have yet")
    if roots.ndim != 1:
        raise ValueError("input must be 1d or non-empty square 2d array.")
    if roots.shape[0] == 0:
        return jnp.ones((), dtype=roots.dtype)
    a = jnp.ones((1,), dtype=roots.dtype)
    for k in range(roots.shape[0]):
        a = jnp.convolve(a, jnp.stack([jnp.ones((), roots.dtype), -roots[k]]), mode="full")
    return a


__all__ = ["poly", "polyadd", "polysub", "polymul", "polyder", "polyint", "polydiv"]
