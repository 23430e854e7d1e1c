"""jax.scipy.stats.chi2's density, JAX's composition step for step (its cdf needs the
incomplete gamma function, which spmd does not have yet)."""
import numpy as _np

from ... import lax as _lax
from ... import numpy as _jnp
from ..special import _const, _inexact


def logpdf(x, df, loc=0, scale=1):
    """(df/2 - 1) log y - y/2 - (lgamma(df/2) + log(2) df / 2) - log(scale), y = (x - loc) /
    scale; -inf below loc."""
    x, df, loc, scale = _inexact("chi2.logpdf", x, df, loc, scale)
    one, two = _const(x, 1), _const(x, 2)
    y = (x - loc) / scale
    half_df = df / two
    kernel = (half_df - one) * _lax.log(y) - y / two
    normalize = -(_lax.lgamma(half_df) + _lax.log(two) * df / two)
    return _jnp.where(x < loc, -_np.inf, normalize - _lax.log(scale) + kernel)


def pdf(x, df, loc=0, scale=1):
    """exp(logpdf)."""
    return _lax.exp(logpdf(x, df, loc, scale))
