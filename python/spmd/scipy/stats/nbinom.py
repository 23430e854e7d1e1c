"""jax.scipy.stats.nbinom's mass function, JAX's composition step for step."""
import numpy as _np

from ... import lax as _lax
from ... import numpy as _jnp
from ..special import _const, _inexact, gammaln, xlogy


def logpmf(k, n, p, loc=0):
    """lgamma(y + n) - lgamma(n) - lgamma(y + 1) + n log p + y log(1 - p), y = k - loc; -inf
    below loc."""
    k, n, p, loc = _inexact("nbinom.logpmf", k, n, p, loc)
    one = _const(k, 1)
    y = k - loc
    comb = gammaln(y + n) - gammaln(n) - gammaln(y + one)
    return _jnp.where(k < loc, -_np.inf, comb + (xlogy(n, p) + xlogy(y, one - p)))


def pmf(k, n, p, loc=0):
    """exp(logpmf)."""
    return _lax.exp(logpmf(k, n, p, loc))
