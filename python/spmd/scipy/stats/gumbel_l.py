"""jax.scipy.stats.gumbel_l (the left-skewed Gumbel), JAX's compositions step for step: with
z = (x - loc) / scale, log pdf = -log(scale) + (z - exp(z)); NaN where scale <= 0."""
import numpy as _np

from ... import lax as _lax
from ... import numpy as _jnp
from ..special import _const, _inexact, xlog1py, xlogy


def _positive(scale, value):
    return _jnp.where(scale > _const(scale, 0), value, _np.nan)


def logpdf(x, loc=0, scale=1):
    x, loc, scale = _inexact("gumbel_l.logpdf", x, loc, scale)
    z = (x - loc) / scale
    return _positive(scale, xlogy(-1, scale) + (z - _lax.exp(z)))


def pdf(x, loc=0, scale=1):
    """exp(logpdf)."""
    return _lax.exp(logpdf(x, loc, scale))


def logcdf(x, loc=0, scale=1):
    """log(-expm1(-exp(z)))."""
    x, loc, scale = _inexact("gumbel_l.logcdf", x, loc, scale)
    neg_exp_z = -_lax.exp((x - loc) / scale)
    return _positive(scale, _lax.log(-_lax.expm1(neg_exp_z)))


def cdf(x, loc=0, scale=1):
    """exp(logcdf)."""
    return _lax.exp(logcdf(x, loc, scale))


def ppf(p, loc=0, scale=1):
    """loc + scale log(-log1p(-p)); NaN outside (0, 1)."""
    p, loc, scale = _inexact("gumbel_l.ppf", p, loc, scale)
    inside = (p > _const(p, 0)) & (p < _const(p, 1))
    return _jnp.where(inside, loc + scale * _lax.log(xlog1py(-1, -p)), _np.nan)


def logsf(x, loc=0, scale=1):
    """-exp(z)."""
    x, loc, scale = _inexact("gumbel_l.logsf", x, loc, scale)
    return _positive(scale, -_lax.exp((x - loc) / scale))


def sf(x, loc=0, scale=1):
    """exp(logsf)."""
    return _jnp.exp(logsf(x, loc, scale))
