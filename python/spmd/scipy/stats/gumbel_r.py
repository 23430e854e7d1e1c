"""jax.scipy.stats.gumbel_r (the right-skewed Gumbel), JAX's compositions step for step: with
z = (x - loc) / scale, log pdf = -log(scale) - (z + exp(-z)); NaN where scale <= 0."""
import numpy as _np

from ... import lax as _lax
from ... import numpy as _jnp
from ...nn import log1mexp as _log1mexp
from ..special import _const, _inexact, xlogy


def _positive(scale, value):
    return _jnp.where(scale > _const(scale, 0), value, _np.nan)


def logpdf(x, loc=0, scale=1):
    x, loc, scale = _inexact("gumbel_r.logpdf", x, loc, scale)
    z = (x - loc) / scale
    return _positive(scale, xlogy(-1, scale) + -(z + _lax.exp(-z)))


def pdf(x, loc=0, scale=1):
    """exp(logpdf)."""
    return _lax.exp(logpdf(x, loc, scale))


def logcdf(x, loc=0, scale=1):
    """-exp(-z)."""
    x, loc, scale = _inexact("gumbel_r.logcdf", x, loc, scale)
    return _positive(scale, -_lax.exp(-((x - loc) / scale)))


def cdf(x, loc=0, scale=1):
    """exp(logcdf)."""
    return _lax.exp(logcdf(x, loc, scale))


def ppf(p, loc=0, scale=1):
    """loc - scale log(-log p); NaN outside (0, 1)."""
    p, loc, scale = _inexact("gumbel_r.ppf", p, loc, scale)
    inside = (p > _const(p, 0)) & (p < _const(p, 1))
    return _jnp.where(inside, loc - scale * _lax.log(xlogy(-1, p)), _np.nan)


def sf(x, loc=0, scale=1):
    """1 - exp(-exp((loc - x) / scale))."""
    x, loc, scale = _inexact("gumbel_r.sf", x, loc, scale)
    neg_z = (loc - x) / scale
    return _positive(scale, _const(x, 1) - _lax.exp(-_lax.exp(neg_z)))


def logsf(x, loc=0, scale=1):
    """log1mexp(exp((loc - x) / scale))."""
    x, loc, scale = _inexact("gumbel_r.logsf", x, loc, scale)
    return _positive(scale, _log1mexp(_lax.exp((loc - x) / scale)))
