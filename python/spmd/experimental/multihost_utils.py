"""jax.experimental.multihost_utils over spmd/multihost.h."""
from .._core import Array, dtype_of


def process_allgather(x):
    """The whole of Array `x` as a NumPy array on every process (a collective: every process
    calls it)."""
    if not isinstance(x, Array):
        raise TypeError(f"process_allgather takes an spmd.Array, not {type(x).__name__}")
    return x._gathered_bytes().view(dtype_of(x._dtype)).reshape(x.shape)


__all__ = ["process_allgather"]
