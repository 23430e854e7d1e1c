"""jax.scipy.stats.pareto, JAX's compositions step for step: b x^-(b+1) from x = 1 (scaled
x = (x - loc) / scale), nothing below loc + scale."""
import numpy as _np

from ... import lax as _lax
from ... import numpy as _jnp
from ..special import _const, _inexact


def _scaled(name, x, b, loc, scale):
    x, b, loc, scale = _inexact(name, x, b, loc, scale)
    return x, b, loc, scale, (x - loc) / scale


def logpdf(x, b, loc=0, scale=1):
    """-(log(scale / b) + (b + 1) log z); -inf below loc + scale."""
    x, b, loc, scale, z = _scaled("pareto.logpdf", x, b, loc, scale)
    log_probs = -(_lax.log(scale / b) + (b + _const(x, 1)) * _lax.log(z))
    return _jnp.where(x < loc + scale, -_np.inf, log_probs)


def pdf(x, b, loc=0, scale=1):
    """exp(logpdf)."""
    return _lax.exp(logpdf(x, b, loc, scale))


def cdf(x, b, loc=0, scale=1):
    """1 - z^-b; 0 below loc + scale."""
    x, b, loc, scale, z = _scaled("pareto.cdf", x, b, loc, scale)
    return _jnp.where(x < loc + scale, _const(x, 0), _const(x, 1) - _lax.pow(z, -b))


def logcdf(x, b, loc=0, scale=1):
    """log1p(-z^-b); -inf below loc + scale."""
    x, b, loc, scale, z = _scaled("pareto.logcdf", x, b, loc, scale)
    return _jnp.where(x < loc + scale, -_np.inf, _lax.log1p(-_lax.pow(z, -b)))


def logsf(x, b, loc=0, scale=1):
    """-b log z; 0 below loc + scale."""
    x, b, loc, scale, z = _scaled("pareto.logsf", x, b, loc, scale)
    return _jnp.where(x < loc + scale, _const(x, 0), -(b * _lax.log(z)))


def sf(x, b, loc=0, scale=1):
    """exp(logsf)."""
    return _lax.exp(logsf(x, b, loc, scale))


def ppf(q, b, loc=0, scale=1):
    """loc + scale (1 - q)^(-1/b); NaN outside [0, 1]."""
    q, b, loc, scale = _inexact("pareto.ppf", q, b, loc, scale)
    one = _const(q, 1)
    value = loc + scale * _lax.pow(one - q, -(one / b))
    return _jnp.where(_jnp.isnan(q) | (q < 0) | (q > 1), _np.nan, value)
