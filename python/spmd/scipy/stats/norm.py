"""jax.scipy.stats.norm: the normal distribution, JAX's compositions step for step."""
import math

from ... import numpy as _jnp
from ..special import _inexact, log_ndtr, ndtr, ndtri


def logpdf(x, loc=0, scale=1):
    """log N(x; loc, scale²) = (log(2π scale²) + ((x - loc) / scale)²) / -2, JAX's grouping."""
    x, loc, scale = _inexact("norm.logpdf", x, loc, scale)
    scale_sqrd = _jnp.square(scale)
    log_normalizer = _jnp.log(_jnp.asarray(2 * math.pi, x.dtype) * scale_sqrd)
    quadratic = _jnp.square(x - loc) / scale_sqrd
    return (log_normalizer + quadratic) / _jnp.asarray(-2, x.dtype)


def pdf(x, loc=0, scale=1):
    """exp(logpdf)."""
    return _jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    """ndtr((x - loc) / scale)."""
    x, loc, scale = _inexact("norm.cdf", x, loc, scale)
    return ndtr((x - loc) / scale)


def logcdf(x, loc=0, scale=1):
    """log_ndtr((x - loc) / scale)."""
    x, loc, scale = _inexact("norm.logcdf", x, loc, scale)
    return log_ndtr((x - loc) / scale)


def ppf(q, loc=0, scale=1):
    """ndtri(q) * scale + loc."""
    return _jnp.asarray(ndtri(q) * scale + loc, float)


def logsf(x, loc=0, scale=1):
    """logcdf(-x, -loc, scale)."""
    x, loc, scale = _inexact("norm.logsf", x, loc, scale)
    return logcdf(-x, -loc, scale)


def sf(x, loc=0, scale=1):
    """cdf(-x, -loc, scale)."""
    x, loc, scale = _inexact("norm.sf", x, loc, scale)
    return cdf(-x, -loc, scale)


def isf(q, loc=0, scale=1):
    """ppf(1 - q, loc, scale)."""
    q = _jnp.asarray(q)
    return ppf(_jnp.asarray(1, q.dtype) - q, loc, scale)
