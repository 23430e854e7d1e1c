"""jax.scipy.stats.gamma's density, JAX's composition step for step (its cdf needs the
incomplete gamma function, which spmd does not have yet)."""
import numpy as _np

from ... import numpy as _jnp
from ..special import _inexact, gammaln, xlogy


def logpdf(x, a, loc=0, scale=1):
    """xlogy(a - 1, y) - y - (gammaln(a) + log(scale)), y = (x - loc) / scale; -inf below loc."""
    x, a, loc, scale = _inexact("gamma.logpdf", x, a, loc, scale)
    ok = x >= loc
    one = _jnp.asarray(1, x.dtype)
    y = _jnp.where(ok, (x - loc) / scale, one)
    log_linear = xlogy(a - one, y) - y
    return _jnp.where(ok, log_linear - (gammaln(a) + _jnp.log(scale)), -_np.inf)


def pdf(x, a, loc=0, scale=1):
    """exp(logpdf)."""
    return _jnp.exp(logpdf(x, a, loc, scale))
