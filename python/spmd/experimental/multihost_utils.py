"""jax.experimental.multihost_utils over spmd/multihost.h. Every function is collective: every
process calls it, in the same order."""
import numpy as _np

from .. import _spmd
from .._core import Array, _bytes, _host, dtype_of


def process_allgather(in_tree, tiled=False):
    """jax.experimental.multihost_utils.process_allgather: each leaf of `in_tree` gathered from
    every process, as NumPy arrays. A global Array this process cannot address whole comes back
    whole, with tiled=True only (JAX's ValueError otherwise); any other leaf (a NumPy array, a
    scalar, an Array this process holds whole) is each process's own value, stacked along a new
    first axis (tiled=False, and always for a scalar between processes) or concatenated along the
    first (tiled=True). Every process must pass leaves of the same shapes and dtypes."""
    from ..tree_util import tree_map

    def one(leaf):
        if isinstance(leaf, Array) and not leaf.is_fully_addressable:
            if not tiled:
                raise ValueError("Gathering global non-fully-addressable arrays only supports"
                                 " tiled=True")
            return leaf._gathered_bytes().view(dtype_of(leaf._dtype)).reshape(leaf.shape)
        host = _np.asarray(leaf)
        if _spmd.process_count() == 1:
            return host if tiled else host[None]
        if host.ndim == 0 or not tiled:
            host = host[None]
        host = _host(host)  # JAX's canonical dtypes, as the global array it makes has
        data = _spmd._process_allgather_host(*_bytes(host), True)
        shape = (host.shape[0] * _spmd.process_count(),) + host.shape[1:]
        return data.view(host.dtype).reshape(shape)

    return tree_map(one, in_tree)


def broadcast_one_to_all(in_tree, is_source=None):
    """Process 0's value (or that of the process passing is_source=True) of each leaf of
    `in_tree` (NumPy arrays or scalars), on every process."""
    from ..tree_util import tree_map
    source = _spmd.process_index() == 0 if is_source is None else bool(is_source)

    def one(leaf):
        host = _host(leaf)
        data = _spmd._broadcast_one_to_all(*_bytes(host), source)
        return data.view(host.dtype).reshape(host.shape)

    return tree_map(one, in_tree)


def assert_equal(in_tree, fail_message=""):
    """Returns when every process passed equal leaves; otherwise raises InvalidArgument in every
    process, naming a process whose value differs."""
    from ..tree_util import tree_leaves
    for leaf in tree_leaves(in_tree):
        _spmd._assert_equal(*_bytes(_host(_np.asarray(leaf))), fail_message or "assert_equal")


sync_global_devices = _spmd.sync_global_devices

__all__ = ["assert_equal", "broadcast_one_to_all", "process_allgather", "sync_global_devices"]
