"""jax.experimental.multihost_utils over spmd/multihost.h. Every function is collective: every
process calls it, in the same order."""
import numpy as _np

from .. import _spmd
from .._core import Array, _bytes, _host, dtype_of


def process_allgather(x):
    """The whole of Array `x` as a NumPy array on every process."""
    if not isinstance(x, Array):
        raise TypeError(f"process_allgather takes an spmd.Array, not {type(x).__name__}")
    return x._gathered_bytes().view(dtype_of(x._dtype)).reshape(x.shape)


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
