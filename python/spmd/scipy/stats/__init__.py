"""jax.scipy.stats: the distributions whose functions training code reaches for, each a module
of JAX's compositions (python/spmd/scipy/special.py's functions underneath)."""
from . import (bernoulli, beta, cauchy, expon, gamma, laplace, logistic,  # noqa: F401
               multivariate_normal, norm, poisson, uniform)

__all__ = ["bernoulli", "beta", "cauchy", "expon", "gamma", "laplace", "logistic",
           "multivariate_normal", "norm", "poisson", "uniform"]
