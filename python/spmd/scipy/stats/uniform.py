"""jax.scipy.stats.uniform on [loc, loc + scale], JAX's compositions step for step."""
import numpy as _np

from ... import numpy as _jnp
from ..special import _inexact


def logpdf(x, loc=0, scale=1):
    """-log(scale) inside, -inf outside."""
    x, loc, scale = _inexact("uniform.logpdf", x, loc, scale)
    log_probs = -_jnp.log(scale)
    return _jnp.where((x > loc + scale) | (x < loc), -_np.inf, log_probs)


def pdf(x, loc=0, scale=1):
    """exp(logpdf)."""
    return _jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    """0 below, 1 above, (x - loc) / scale inside."""
    x, loc, scale = _inexact("uniform.cdf", x, loc, scale)
    zero, one = _jnp.array(0, x.dtype), _jnp.array(1, x.dtype)
    conds = [x < loc, x > loc + scale, (x >= loc) & (x <= loc + scale)]
    return _jnp.select(conds, [zero, one, (x - loc) / scale])


def ppf(q, loc=0, scale=1):
    """loc + scale q, NaN outside [0, 1]."""
    q, loc, scale = _inexact("uniform.ppf", q, loc, scale)
    return _jnp.where(_jnp.isnan(q) | (q < 0) | (q > 1), _np.nan, loc + scale * q)
