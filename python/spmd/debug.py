"""jax.debug: print, log and callback from inside traced functions (python/spmd/_callbacks.py)."""
from ._callbacks import debug_callback as callback
from ._callbacks import debug_log as log
from ._callbacks import debug_print as print  # noqa: A001 - jax.debug's name

__all__ = ["callback", "log", "print"]
