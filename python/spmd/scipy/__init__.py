"""jax.scipy: special functions and distributions (special, stats), JAX's compositions over
spmd's operations."""
from . import special, stats  # noqa: F401
