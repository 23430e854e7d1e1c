"""jax.scipy.stats.laplace, JAX's compositions step for step."""
from ... import numpy as _jnp
from ..special import _inexact


def logpdf(x, loc=0, scale=1):
    """-(|x - loc| / scale + log(2 scale))."""
    x, loc, scale = _inexact("laplace.logpdf", x, loc, scale)
    two = _jnp.asarray(2, x.dtype)
    return -(_jnp.abs(x - loc) / scale + _jnp.log(two * scale))


def pdf(x, loc=0, scale=1):
    """exp(logpdf)."""
    return _jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    """exp(d)/2 for d = (x - loc) / scale <= 0, 1 - exp(-d)/2 above."""
    x, loc, scale = _inexact("laplace.cdf", x, loc, scale)
    half, one = _jnp.asarray(0.5, x.dtype), _jnp.asarray(1, x.dtype)
    diff = (x - loc) / scale
    return _jnp.where(diff <= 0, half * _jnp.exp(diff), one - half * _jnp.exp(-diff))
