"""spmd.experimental: jax.experimental's multihost_utils."""
from . import multihost_utils  # noqa: F401
