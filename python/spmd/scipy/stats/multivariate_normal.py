"""jax.scipy.stats.multivariate_normal, JAX's composition step for step (a Cholesky factor and a
triangular solve per vector), the squared norms summed by jnp.sum where JAX's einsum contracts:
the same values within the rounding of a reordered sum."""
import math

import numpy as _np

from ... import lax as _lax
from ... import numpy as _jnp
from ..special import _inexact


def logpdf(x, mean, cov, allow_singular=None):
    """The log density of N(mean, cov) at x (trailing axis the vector's); cov a scalar, or a
    matrix of the vectors' size (batched over leading axes)."""
    if allow_singular is not None:
        raise NotImplementedError("allow_singular argument of multivariate_normal.logpdf")
    x, mean, cov = _inexact("multivariate_normal.logpdf", x, mean, cov)
    log_2pi = math.log(2 * math.pi)
    if not mean.shape:
        return -1 / 2 * _jnp.square(x - mean) / cov - 1 / 2 * (log_2pi + _jnp.log(cov))
    n = mean.shape[-1]
    if not _np.shape(cov):
        y = x - mean
        return (-1 / 2 * _jnp.sum(y * y, axis=-1) / cov
                - n / 2 * (log_2pi + _jnp.log(cov)))
    if cov.ndim < 2 or tuple(cov.shape[-2:]) != (n, n):
        raise ValueError("multivariate_normal.logpdf got incompatible shapes")
    factor = _jnp.linalg.cholesky(cov)
    diff = x - mean
    y = _solve_lower(factor, diff)
    return (-1 / 2 * _jnp.sum(y * y, axis=-1) - n / 2 * log_2pi
            - _jnp.sum(_jnp.log(_jnp.diagonal(factor, axis1=-1, axis2=-2)), axis=-1))


def _solve_lower(factor, diff):
    """L^-1 diff for every vector of diff (JAX's vectorized triangular_solve, lower=True,
    transpose_a=True, which solves with the factor on the right: y L^T = diff)."""
    shape = _jnp.broadcast_shapes(tuple(factor.shape[:-2]), tuple(diff.shape[:-1]))
    n = diff.shape[-1]
    f = _jnp.broadcast_to(factor, shape + (n, n))
    d = _jnp.broadcast_to(diff, shape + (n,))
    y = _lax.linalg.triangular_solve(f, _jnp.expand_dims(d, -2), left_side=False, lower=True,
                                     transpose_a=True)
    return _jnp.squeeze(y, -2)


def pdf(x, mean, cov):
    """exp(logpdf)."""
    return _jnp.exp(logpdf(x, mean, cov))
