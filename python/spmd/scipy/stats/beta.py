"""jax.scipy.stats.beta's density, JAX's composition step for step (its cdf needs the incomplete
beta function, which spmd does not have yet)."""
import numpy as _np

from ... import numpy as _jnp
from ..special import _inexact, betaln, xlog1py, xlogy


def logpdf(x, a, b, loc=0, scale=1):
    """-betaln(a, b) + xlogy(a - 1, y) + xlog1py(b - 1, -y) - log(scale); -inf outside
    [loc, loc + scale], NaN for a, b or scale <= 0."""
    x, a, b, loc, scale = _inexact("beta.logpdf", x, a, b, loc, scale)
    one, zero = _jnp.asarray(1, x.dtype), _jnp.asarray(0, a.dtype)
    y = (x - loc) / scale
    log_linear = xlogy(a - one, y) + xlog1py(b - one, -y)
    log_probs = (-betaln(a, b) + log_linear) - _jnp.log(scale)
    result = _jnp.where((x > loc + scale) | (x < loc), -_np.inf, log_probs)
    return _jnp.where((a <= zero) | (b <= zero) | (scale <= zero), _np.nan, result)


def pdf(x, a, b, loc=0, scale=1):
    """exp(logpdf)."""
    return _jnp.exp(logpdf(x, a, b, loc, scale))
