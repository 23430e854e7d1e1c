"""The Python side of spmd's values: NumPy dtypes, Array's NumPy interface and operators, and
device_put. Arrays and Tensors come from the _spmd extension module (python/src/)."""
import numpy as np

from . import _spmd
from .tree_util import tree_leaves

try:  # bfloat16's NumPy dtype, as JAX uses it
    import ml_dtypes
    _BFLOAT16 = np.dtype(ml_dtypes.bfloat16)
except ImportError:  # pragma: no cover - ml_dtypes comes with the pinned requirements
    _BFLOAT16 = None

Array = _spmd.Array
Tensor = _spmd.Tensor


def dtype_of(name):
    """NumPy's dtype for spmd's dtype name."""
    return _BFLOAT16 if name == "bfloat16" else np.dtype(name)


def dtype_name(dtype):
    """spmd's name of a NumPy dtype (or of anything np.dtype takes)."""
    d = np.dtype(dtype)
    if _BFLOAT16 is not None and d == _BFLOAT16:
        return "bfloat16"
    return d.name


def _numpy(self, dtype=None, copy=None):
    if self.is_fully_replicated and not self.is_fully_addressable:
        # Every device holds it whole (as JAX, read this process's copy).
        data = self._replica_bytes().view(dtype_of(self._dtype)).reshape(self.shape)
        return data if dtype is None else data.astype(dtype)
    if not self.is_fully_addressable:
        raise RuntimeError(
            "spmd.Array spans devices of other processes, so this process cannot read all of it; "
            "use spmd.experimental.multihost_utils.process_allgather(x) to gather it first")
    data = self._host_bytes().view(dtype_of(self._dtype)).reshape(self.shape)
    return data if dtype is None else data.astype(dtype)


Array.dtype = property(lambda self: dtype_of(self._dtype))
Tensor.dtype = property(lambda self: dtype_of(self._dtype))
Array.__array__ = _numpy
Array.ndim = property(lambda self: len(self.shape))
Array.size = property(lambda self: int(np.prod(self.shape, dtype=np.int64)))
Array.block_until_ready = lambda self: self


def has_traced(tree):
    """Whether any leaf of `tree` is a traced value (the call is inside a traced function)."""
    return any(isinstance(x, Tensor) for x in tree_leaves(tree))


def _host(x):
    """x as a C-contiguous NumPy array."""
    host = np.asarray(x)
    return host if host.flags.c_contiguous else np.ascontiguousarray(host)


def _bytes(host):
    """What the extension module takes for host data: its bytes, shape and dtype name."""
    return host.reshape(-1).view(np.uint8), list(host.shape), dtype_name(host.dtype)


def device_put(x, sharding):
    """jax.device_put: a NumPy array (or anything np.asarray takes) or an Array, laid out as
    `sharding` (a NamedSharding, or a PartitionSpec on the mesh in scope)."""
    if isinstance(sharding, _spmd.PartitionSpec):
        mesh = _spmd.get_mesh()
        if mesh is None:
            raise _spmd.errors.InvalidArgument(
                f"device_put: {sharding!r} needs a mesh; give a NamedSharding or set one with "
                "spmd.set_mesh(mesh)")
        sharding = _spmd.NamedSharding(mesh, sharding)
    if isinstance(x, Array):
        return _spmd._device_put_array(x, sharding)
    host = _host(x)
    if host.dtype == np.float64 or host.dtype == np.int64:
        # JAX's default (x64 off): 64-bit host values become 32-bit arrays.
        host = host.astype(np.float32 if host.dtype == np.float64 else np.int32)
    return _spmd._device_put_bytes(*_bytes(host), sharding)


def make_array_from_process_local_data(sharding, local_data, global_shape=None):
    """jax.make_array_from_process_local_data: this process's rows of the global array."""
    return _spmd._make_from_process_local_bytes(
        sharding, *_bytes(_host(local_data)), None if global_shape is None else list(global_shape))


def make_array_from_callback(shape, sharding, data_callback, dtype=None):
    """jax.make_array_from_callback: data_callback(index) gives the block at `index` (a tuple of
    slices) for each of this process's devices."""
    def block(bounds):
        return _bytes(_host(data_callback(tuple(slice(a, b) for a, b in bounds))))

    return _spmd._make_from_callback(list(shape), sharding,
                                     None if dtype is None else dtype_name(dtype), block)
