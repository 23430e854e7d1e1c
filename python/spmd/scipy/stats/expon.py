"""jax.scipy.stats.expon, JAX's compositions step for step."""
import numpy as _np

from ... import numpy as _jnp
from ..special import _inexact


def logpdf(x, loc=0, scale=1):
    """-((x - loc) / scale + log(scale)) for x >= loc, -inf below."""
    x, loc, scale = _inexact("expon.logpdf", x, loc, scale)
    log_probs = -((x - loc) / scale + _jnp.log(scale))
    return _jnp.where(x < loc, -_np.inf, log_probs)


def pdf(x, loc=0, scale=1):
    """exp(logpdf)."""
    return _jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    """-expm1((loc - x) / scale) for x >= loc, 0 below."""
    x, loc, scale = _inexact("expon.cdf", x, loc, scale)
    neg_scaled = (loc - x) / scale
    return _jnp.where(x < loc, _jnp.zeros((), neg_scaled.dtype), -_jnp.expm1(neg_scaled))


def logsf(x, loc=0, scale=1):
    """(loc - x) / scale for x >= loc, 0 below."""
    x, loc, scale = _inexact("expon.sf", x, loc, scale)
    neg_scaled = (loc - x) / scale
    return _jnp.where(x < loc, _jnp.zeros((), neg_scaled.dtype), neg_scaled)


def sf(x, loc=0, scale=1):
    """exp(logsf)."""
    return _jnp.exp(logsf(x, loc, scale))


def logcdf(x, loc=0, scale=1):
    """log1p(-sf)."""
    return _jnp.log1p(-sf(x, loc, scale))


def ppf(q, loc=0, scale=1):
    """loc - scale log1p(-q), NaN outside [0, 1]."""
    q, loc, scale = _inexact("expon.ppf", q, loc, scale)
    return _jnp.where(_jnp.isnan(q) | (q < 0) | (q > 1), _np.nan,
                      loc - scale * _jnp.log1p(-q))
