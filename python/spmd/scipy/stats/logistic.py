"""jax.scipy.stats.logistic, JAX's compositions step for step."""
from ... import numpy as _jnp
from ..special import _inexact, expit, logit


def logpdf(x, loc=0, scale=1):
    """-2 logaddexp(z/2, -z/2) - log(scale), z = (x - loc) / scale."""
    x, loc, scale = _inexact("logistic.logpdf", x, loc, scale)
    z = (x - loc) / scale
    two = _jnp.asarray(2, z.dtype)
    half = z / two
    return -two * _jnp.logaddexp(half, -half) - _jnp.log(scale)


def pdf(x, loc=0, scale=1):
    """exp(logpdf)."""
    return _jnp.exp(logpdf(x, loc, scale))


def ppf(x, loc=0, scale=1):
    """logit(x) * scale + loc."""
    x, loc, scale = _inexact("logistic.ppf", x, loc, scale)
    return logit(x) * scale + loc


def sf(x, loc=0, scale=1):
    """expit(-(x - loc) / scale)."""
    x, loc, scale = _inexact("logistic.sf", x, loc, scale)
    return expit(-((x - loc) / scale))


def isf(x, loc=0, scale=1):
    """-logit(x) * scale + loc."""
    x, loc, scale = _inexact("logistic.isf", x, loc, scale)
    return -logit(x) * scale + loc


def cdf(x, loc=0, scale=1):
    """expit((x - loc) / scale)."""
    x, loc, scale = _inexact("logistic.cdf", x, loc, scale)
    return expit((x - loc) / scale)
