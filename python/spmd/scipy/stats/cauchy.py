"""jax.scipy.stats.cauchy, JAX's compositions step for step."""
import math

from ... import numpy as _jnp
from ..special import _inexact


def logpdf(x, loc=0, scale=1):
    """-(log(π scale) + log1p(z²)), z = (x - loc) / scale."""
    x, loc, scale = _inexact("cauchy.logpdf", x, loc, scale)
    pi = _jnp.asarray(math.pi, x.dtype)
    z = (x - loc) / scale
    return -(_jnp.log(pi * scale) + _jnp.log1p(z * z))


def pdf(x, loc=0, scale=1):
    """exp(logpdf)."""
    return _jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    """1/2 + arctan(z) / π."""
    x, loc, scale = _inexact("cauchy.cdf", x, loc, scale)
    pi = _jnp.asarray(math.pi, x.dtype)
    z = (x - loc) / scale
    return _jnp.asarray(0.5, x.dtype) + (_jnp.asarray(1., x.dtype) / pi) * _jnp.arctan(z)


def logcdf(x, loc=0, scale=1):
    """log(cdf)."""
    return _jnp.log(cdf(x, loc, scale))


def sf(x, loc=0, scale=1):
    """cdf(-x, -loc, scale)."""
    x, loc, scale = _inexact("cauchy.sf", x, loc, scale)
    return cdf(-x, -loc, scale)


def logsf(x, loc=0, scale=1):
    """logcdf(-x, -loc, scale)."""
    x, loc, scale = _inexact("cauchy.logsf", x, loc, scale)
    return logcdf(-x, -loc, scale)


def isf(q, loc=0, scale=1):
    """tan(π/2 - π q) scale + loc."""
    q, loc, scale = _inexact("cauchy.isf", q, loc, scale)
    pi, half_pi = _jnp.asarray(math.pi, q.dtype), _jnp.asarray(math.pi / 2, q.dtype)
    return _jnp.tan(half_pi - pi * q) * scale + loc


def ppf(q, loc=0, scale=1):
    """tan(π q - π/2) scale + loc."""
    q, loc, scale = _inexact("cauchy.ppf", q, loc, scale)
    pi, half_pi = _jnp.asarray(math.pi, q.dtype), _jnp.asarray(math.pi / 2, q.dtype)
    return _jnp.tan(pi * q - half_pi) * scale + loc
