"""jax.scipy.stats: the distributions whose functions training code reaches for, each a module
of JAX's compositions (python/spmd/scipy/special.py's functions underneath)."""
from . import (bernoulli, beta, binom, cauchy, chi2, expon, gamma, geom,  # noqa: F401
               gumbel_l, gumbel_r, laplace, logistic, multivariate_normal, nbinom, norm, pareto,
               poisson, t, uniform)

__all__ = ["bernoulli", "beta", "binom", "cauchy", "chi2", "expon", "gamma", "geom", "gumbel_l",
           "gumbel_r", "laplace", "logistic", "multivariate_normal", "nbinom", "norm", "pareto",
           "poisson", "t", "uniform"]
