"""jax.scipy.stats.binom's mass function, JAX's composition step for step."""
import numpy as _np

from ... import lax as _lax
from ... import numpy as _jnp
from ..special import _const, _inexact, gammaln, xlog1py, xlogy


def logpmf(k, n, p, loc=0):
    """log C(n, y) + y log p + (n - y) log1p(-p), y = k - loc; 0 where y = n = 0 or the linear
    term is 0 (p at 0 or 1), -inf outside [loc, loc + n]."""
    k, n, p, loc = _inexact("binom.logpmf", k, n, p, loc)
    y = k - loc
    zero = _const(y, 0)
    comb = gammaln(n + 1) - (gammaln(y + 1) + gammaln(n - y + 1))
    linear = xlogy(y, p) + xlog1py(n - y, -p)
    certain = ((y == zero) & (n == zero)) | (linear == zero)
    log_probs = _jnp.where(certain, 0.0, comb + linear)
    return _jnp.where((k >= loc) & (k < loc + n + 1), log_probs, -_np.inf)


def pmf(k, n, p, loc=0):
    """exp(logpmf)."""
    return _lax.exp(logpmf(k, n, p, loc))
