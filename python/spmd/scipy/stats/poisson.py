"""jax.scipy.stats.poisson's mass function, JAX's composition step for step (its cdf needs the
incomplete gamma function, which spmd does not have yet)."""
import numpy as _np

from ... import numpy as _jnp
from ..special import _inexact, gammaln, xlogy


def logpmf(k, mu, loc=0):
    """xlogy(k', mu) - gammaln(k' + 1) - mu, k' = k - loc; -inf for k' < 0 or k not whole."""
    k, mu, loc = _inexact("poisson.logpmf", k, mu, loc)
    x = k - loc
    log_probs = xlogy(x, mu) - gammaln(x + 1) - mu
    return _jnp.where((x < 0) | (_jnp.round(k) != k), -_np.inf, log_probs)


def pmf(k, mu, loc=0):
    """exp(logpmf)."""
    return _jnp.exp(logpmf(k, mu, loc))
