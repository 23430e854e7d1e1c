"""jax.scipy.stats.bernoulli, JAX's compositions step for step."""
import numpy as _np

from ... import numpy as _jnp
from ..special import _inexact, xlog1py, xlogy


def logpmf(k, p, loc=0):
    """xlogy(k', p) + xlog1py(1 - k', -p), k' = k - loc; -inf outside {0, 1}."""
    k, p, loc = _inexact("bernoulli.logpmf", k, p, loc)
    zero, one = _jnp.asarray(0, k.dtype), _jnp.asarray(1, k.dtype)
    x = k - loc
    log_probs = xlogy(x, p) + xlog1py(one - x, -p)
    return _jnp.where((x < zero) | (x > one), -_np.inf, log_probs)


def pmf(k, p, loc=0):
    """exp(logpmf)."""
    return _jnp.exp(logpmf(k, p, loc))


def cdf(k, p):
    """0 below 0, 1 - p on [0, 1), 1 from 1; NaN for NaN or p outside [0, 1]."""
    k, p = _inexact("bernoulli.cdf", k, p)
    zero, one = _jnp.asarray(0, k.dtype), _jnp.asarray(1, k.dtype)
    conds = [_jnp.isnan(k) | _jnp.isnan(p) | (p < zero) | (p > one), k < zero,
             (k >= zero) & (k < one), k >= one]
    return _jnp.select(conds, [_jnp.asarray(_np.nan, k.dtype), zero, one - p, one])


def ppf(q, p):
    """0 for q <= 1 - p, else 1; NaN outside the domain."""
    q, p = _inexact("bernoulli.ppf", q, p)
    zero, one = _jnp.asarray(0, q.dtype), _jnp.asarray(1, q.dtype)
    bad = _jnp.isnan(q) | _jnp.isnan(p) | (p < zero) | (p > one) | (q < zero) | (q > one)
    return _jnp.where(bad, _np.nan, _jnp.where(q <= one - p, zero, one))
