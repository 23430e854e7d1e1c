"""jax.scipy.stats.t (Student's t) density, JAX's composition step for step (its cdf needs the
incomplete beta function, which spmd does not have yet)."""
import numpy as _np

from ... import lax as _lax
from ..special import _const, _inexact


def logpdf(x, df, loc=0, scale=1):
    """-(lgamma(df/2) + log(scale^2 pi df)/2 - lgamma((df+1)/2) + (df+1)/2 log1p(z^2/df)),
    z = (x - loc) / scale."""
    x, df, loc, scale = _inexact("t.logpdf", x, df, loc, scale)
    two = _const(x, 2)
    z = (x - loc) / scale
    half_df = df / two
    half_df_plus_half = half_df + _const(x, 0.5)
    normalize = (_lax.lgamma(half_df) + _lax.log(scale * scale * _const(x, _np.pi) * df) / two
                 - _lax.lgamma(half_df_plus_half))
    return -(normalize + half_df_plus_half * _lax.log1p(z * z / df))


def pdf(x, df, loc=0, scale=1):
    """exp(logpdf)."""
    return _lax.exp(logpdf(x, df, loc, scale))
