"""jax.scipy.stats.geom, JAX's composition step for step: (1 - p)^(k - 1) p from k = 1."""
import numpy as _np

from ... import lax as _lax
from ... import numpy as _jnp
from ..special import _const, _inexact, xlog1py


def logpmf(k, p, loc=0):
    """xlog1py(k - loc - 1, -p) + log p; -inf at k - loc <= 0."""
    k, p, loc = _inexact("geom.logpmf", k, p, loc)
    x = k - loc
    log_probs = xlog1py(x - _const(k, 1), -p) + _lax.log(p)
    return _jnp.where(x <= _const(k, 0), -_np.inf, log_probs)


def pmf(k, p, loc=0):
    """exp(logpmf)."""
    return _jnp.exp(logpmf(k, p, loc))
