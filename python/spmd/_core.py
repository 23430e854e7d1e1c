"""The Python side of spmd's values: NumPy dtypes, Array's NumPy interface, its shards and
committed flag, device_put and the make_array_* constructors. Arrays and Tensors come from the
_spmd extension module (python/src/).

Committed arrays (JAX's rule): an Array placed on purpose (device_put with a sharding or device,
the make_array_* constructors, a computation on committed arrays) is committed to its devices;
one created without a placement (spmd.numpy's constructors, PRNGKey, device_put(x) alone, a
computation on uncommitted arrays only) lives on the first local device, uncommitted, and jit
moves it onto the devices of its committed arguments."""
import operator
from collections import namedtuple

import numpy as np

from . import _arguments, _spmd
from .tree_util import tree_flatten, tree_leaves, tree_unflatten

try:  # bfloat16's NumPy dtype, as JAX uses it
    import ml_dtypes
    _BFLOAT16 = np.dtype(ml_dtypes.bfloat16)
except ImportError:  # pragma: no cover - ml_dtypes comes with the pinned requirements
    _BFLOAT16 = None

Array = _spmd.Array
Tensor = _spmd.Tensor

# The bound classes under the modules users reach them by, so that a type in a message reads
# <class 'spmd.sharding.Mesh'>, not the extension module's name.
_SHARDING_TYPES = {"Mesh", "NamedSharding", "PartitionSpec", "Sharding", "SingleDeviceSharding",
                   "PositionalSharding", "AxisType"}
for _name in dir(_spmd):
    _type = getattr(_spmd, _name)
    if isinstance(_type, type) and not _name.startswith("_"):
        _type.__module__ = "spmd.sharding" if _name in _SHARDING_TYPES else "spmd"
        _arguments.public_methods(_type, f"{_type.__module__}.{_name}")
for _name in dir(_spmd.errors):
    _type = getattr(_spmd.errors, _name)
    if isinstance(_type, type) and issubclass(_type, Exception):
        _type.__module__ = "spmd.errors"


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
    if self.is_fully_replicated or (self.is_fully_addressable and self._num_shards == 1):
        # One shard holds it whole: a read-only view of this process's copy, as JAX's.
        data = self._replica_bytes().view(dtype_of(self._dtype)).reshape(self.shape)
        if copy:
            data = data.copy()
        return data if dtype is None else data.astype(dtype)
    if not self.is_fully_addressable:
        raise RuntimeError(
            "spmd.Array spans devices of other processes, so this process cannot read all of it; "
            "use spmd.experimental.multihost_utils.process_allgather(x, tiled=True) to gather it first")
    data = self._host_bytes().view(dtype_of(self._dtype)).reshape(self.shape)
    return data if dtype is None else data.astype(dtype)


Array.dtype = property(lambda self: dtype_of(self._dtype))
Tensor.dtype = property(lambda self: dtype_of(self._dtype))
Array.__array__ = _numpy


def _dlpack(self, *, stream=None, max_version=None, dl_device=None, copy=None):
    """The array's bytes through DLPack, as NumPy exports them: without a copy where one shard
    holds the whole array and the consumer reads DLPack 1.0 or later (which can mark the data
    read-only, as an Array's is); otherwise a copy, unless copy=False."""
    data = _numpy(self)
    if copy or (not data.flags.writeable and (max_version is None or max_version[0] < 1)):
        if copy is False:
            raise BufferError("spmd.Array: its data are read-only, and a consumer of DLPack "
                              "before 1.0 cannot be told so; ask for max_version=(1, 0)")
        data = data.copy()
    return data.__dlpack__(stream=stream, max_version=max_version, dl_device=dl_device,
                           copy=False if copy else copy)


Array.__dlpack__ = _dlpack
Array.__dlpack_device__ = lambda self: (1, 0)  # kDLCPU: every spmd device is this host's CPU
Array.ndim = property(lambda self: len(self.shape))
Array.size = property(lambda self: int(np.prod(self.shape, dtype=np.int64)))


def _repr(self):
    """JAX's form, Array([1., 2.], dtype=float32), where this process can read the values; the
    shape and sharding otherwise."""
    if not (self.is_fully_addressable or self.is_fully_replicated):
        return self._describe()
    values = np.array2string(np.asarray(self), separator=", ", prefix="Array(")
    return f"Array({values}, dtype={self.dtype})"


def _str(self):
    if not (self.is_fully_addressable or self.is_fully_replicated):
        return self._describe()
    return str(np.asarray(self))


def _format(self, format_spec):
    """JAX's: a rank-0 Array formats as its value does ("{:.2f}"), others as NumPy's array."""
    values = np.asarray(self)
    return format(values[()] if values.ndim == 0 else values, format_spec)


Array.__repr__ = _repr
Array.__str__ = _str
Array.__format__ = _format
def _scalar(self):
    """The one value of a rank-0 Array, as JAX's check_scalar_conversion allows it."""
    if self.shape:
        raise TypeError("Only scalar arrays can be converted to Python scalars; got "
                        f"arr.ndim={len(self.shape)}")
    return np.asarray(self)[()]


def _bool(self):
    """JAX's truth of an Array: of its one element; ValueError when empty or longer."""
    if self.size == 0:
        raise ValueError("The truth value of an empty array is ambiguous. Use `array.size > 0` "
                         "to check that an array is not empty.")
    if self.size > 1:
        raise ValueError("The truth value of an array with more than one element is ambiguous. "
                         "Use a.any() or a.all()")
    return bool(np.asarray(self).reshape(()))


def _index(self):
    """An integer rank-0 Array as a Python int (an index, range()), as JAX's __index__."""
    if self.shape or np.dtype(self.dtype).kind not in "iu":
        raise TypeError("Only integer scalar arrays can be converted to a scalar index.")
    return operator.index(np.asarray(self)[()])


Array.__float__ = lambda self: float(_scalar(self))
Array.__int__ = lambda self: int(_scalar(self))
Array.__complex__ = lambda self: complex(_scalar(self))
Array.__bool__ = _bool
Array.__index__ = _index
Array.__len__ = lambda self: self.shape[0] if self.shape else _unsized()
Array.__iter__ = lambda self: iter([device_put(row) for row in _rows(self)])
Array.item = lambda self: np.asarray(self).item()
Array.tolist = lambda self: np.asarray(self).tolist()


def _host_index(index):
    """An index as NumPy takes it: Arrays in it (an integer or a boolean mask) as host arrays,
    so that a mask selects (NumPy would take an Array it does not know as a sequence)."""
    if isinstance(index, tuple):
        return tuple(_host_index(i) for i in index)
    return np.asarray(index) if isinstance(index, Array) else index


def _getitem(self, index):
    """x[index], as NumPy indexes this process's copy. An index out of bounds is NumPy's
    IndexError (JAX clamps it without a word)."""
    return device_put(np.asarray(self)[_host_index(index)])


Array.__getitem__ = _getitem


def _unsized():
    raise TypeError("len() of an unsized spmd.Array (rank 0)")


def _rows(self):
    """The host value's rows, read once (indexing each row would read the whole array again)."""
    if not self.shape:
        raise TypeError("iteration over an unsized spmd.Array (rank 0)")
    return np.asarray(self)


Shard = namedtuple("Shard", ["device", "index", "replica_id", "data"])
Shard.__doc__ = "jax.Shard: one addressable device's part of an Array; data a one-device Array."


def _addressable_shards(self):
    shards = []
    for i in range(self._num_shards):
        s = self._shard(i)
        shards.append(Shard(s["device"], s["index"], s["replica_id"], s["data"]))
    return shards


Array.addressable_shards = property(_addressable_shards)
Array.addressable_data = lambda self, i: self.addressable_shards[i].data
Array.devices = lambda self: set(self.sharding._device_assignment)
Array.committed = property(lambda self: getattr(self, "_committed", True))


def uncommitted(x):
    """x (an Array) marked uncommitted: created without a placement, so jit may move it."""
    x._committed = False
    return x


def committed_like(out, inputs):
    """Marks the Arrays of `out` (a list) committed when any Array of `inputs` is (JAX's rule for
    a computation's results); returns out."""
    if not any(getattr(a, "_committed", True) for a in inputs if isinstance(a, Array)):
        for a in out:
            if isinstance(a, Array):
                a._committed = False
    return out


def has_traced(tree):
    """Whether any leaf of `tree` is a traced value (the call is inside a traced function)."""
    return any(isinstance(x, Tensor) for x in tree_leaves(tree))


_NARROW = {np.dtype(np.int64): np.dtype(np.int32), np.dtype(np.uint64): np.dtype(np.uint32),
           np.dtype(np.float64): np.dtype(np.float32)}


def canonical_dtype(dtype):
    """JAX's canonicalize_dtype: with x64 off (spmd.config), 64-bit dtypes are 32-bit."""
    d = np.dtype(dtype)
    return d if _spmd._x64_enabled() else _NARROW.get(d, d)


def canonical_name(dtype):
    """spmd's name of the dtype an array asked for `dtype` gets (canonical_dtype)."""
    return dtype_name(canonical_dtype(dtype))


def default_float():
    return canonical_dtype(np.float64)


def default_int():
    return canonical_dtype(np.int64)


def _python_ints(x):
    """The Python ints (not bools) of x, a scalar or nested lists and tuples of them."""
    if isinstance(x, (list, tuple)):
        return [v for item in x for v in _python_ints(item)]
    return [x] if type(x) is int else []


def _check_host(x, host):
    """JAX's refusals of host data: a Python int beyond the default integer (int32 with x64 off,
    int64 with it on) is an OverflowError, as JAX's; an array of objects, strings or complex
    numbers a TypeError (spmd has no such dtypes). NumPy integers wrap when narrowed, as in
    JAX."""
    ints = _python_ints(x) if host.dtype.kind in "iuO" else []
    if ints:
        bits = 64 if _spmd._x64_enabled() else 32
        for v in (min(ints), max(ints)):
            if not -2 ** (bits - 1) <= v < 2 ** (bits - 1):
                raise OverflowError(f"Python int {v} too large to convert to int{bits}")
    if host.dtype.kind in "OUSMmc":
        raise TypeError(f"Dtype {host.dtype} is not a valid spmd array type: spmd's arrays hold "
                        "bool, integers and floating point numbers (no complex, string or "
                        "object dtypes)")


def _host(x):
    """x as a C-contiguous NumPy array of JAX's canonical types: with x64 off, as in JAX, 64-bit
    host values become 32-bit arrays."""
    host = np.asarray(x)
    _check_host(x, host)
    if host.dtype != canonical_dtype(host.dtype):
        host = host.astype(canonical_dtype(host.dtype))
    return host if host.flags.c_contiguous else np.ascontiguousarray(host)


def _bytes(host):
    """What the extension module takes for host data: its bytes, shape and dtype name."""
    return host.reshape(-1).view(np.uint8), list(host.shape), dtype_name(host.dtype)


def device_put(x, device=None, *, donate=False, may_alias=None):
    """jax.device_put: a NumPy array (or anything np.asarray takes) or an Array, laid out as
    `device`: a Sharding, a Device, a PartitionSpec on the mesh in scope, or None (the first
    local device, uncommitted). A pytree of values is put leaf by leaf.

    As JAX's on CPU, the result may alias a C-contiguous NumPy array's memory (may_alias None or
    True, unless donate): each shard that is whole rows of it views it, so nothing is copied, and
    the NumPy array must not be changed while the result lives. may_alias=False copies."""
    if may_alias and donate:
        raise ValueError("may_alias and donate cannot be True at the same time.")
    alias = not donate if may_alias is None else bool(may_alias)
    if isinstance(x, Tensor):
        raise TypeError("device_put of a traced value: inside jit, lay it out with "
                        "spmd.lax.with_sharding_constraint or spmd.reshard")
    if not isinstance(x, (Array, np.ndarray)) and not np.isscalar(x):
        leaves, tree = tree_flatten(x)
        if tree.kind != "leaf":  # a pytree: leaf by leaf; any other object goes through np.asarray
            return tree_unflatten(tree, [device_put(leaf, device, donate=donate,
                                                    may_alias=may_alias) for leaf in leaves])
    if device is None:
        return uncommitted(_put(x, _spmd.SingleDeviceSharding(_spmd.local_devices()[0]), alias))
    if isinstance(device, _spmd.Device):
        device = _spmd.SingleDeviceSharding(device)
    return _put(x, device, alias)


def _put(x, sharding, alias=True):
    if isinstance(sharding, _spmd.PartitionSpec):
        mesh = _spmd.get_mesh()
        if mesh is None:
            raise _spmd.errors.InvalidArgument(
                f"device_put: {sharding!r} needs a mesh; give a NamedSharding or set one with "
                "spmd.set_mesh(mesh)")
        sharding = _spmd.NamedSharding(mesh, sharding)
    if not isinstance(sharding, _spmd.Sharding):
        raise TypeError(f"device_put: the device must be a Device, a Sharding, a PartitionSpec "
                        f"or None, got {type(sharding).__name__}")
    if isinstance(x, Array):
        if sharding.is_fully_addressable or not x.is_fully_addressable:
            return _spmd._device_put_array(x, sharding)
        if x.committed:  # JAX's refusal: the array is this process's alone
            raise _spmd.errors.InvalidArgument(
                f"device_put: {x!r} is committed to this process's devices, and {sharding!r} spans "
                "other processes' devices; build the global array with "
                "make_array_from_process_local_data, or device_put the host value (the same on "
                "every process)")
        # An uncommitted array is a host value to JAX: every process puts its own copy's slices,
        # checked equal across processes.
    return _spmd._device_put_bytes(*_bytes(_host(x)), sharding, alias)


def _by_device(arrays, devices):
    """`arrays` in the order of `devices`: each Array at its own device's place, the rest
    (host data) in order at the places left."""
    placed, where = [None] * len(devices), {d: i for i, d in enumerate(devices)}
    for k, a in enumerate(arrays):
        if not isinstance(a, Array):
            continue
        on = list(a.devices())
        i = where.get(on[0]) if len(on) == 1 else None
        if len(on) > 1:
            problem = "is on devices " + ", ".join(str(d.id) for d in on)
        elif i is None:
            problem = f"is on device {on[0].id}, which the sharding does not address"
        elif placed[i] is not None:
            problem = f"is on device {on[0].id}, which another array is on too"
        else:
            problem = None
        if problem:
            raise _spmd.errors.InvalidArgument(
                f"make_array_from_single_device_arrays: arrays[{k}] {problem}; each Array must "
                f"be on one device of sharding.addressable_devices "
                f"({', '.join(str(d.id) for d in devices)}), a different one each")
        placed[i] = a
    rest = iter(a for a in arrays if not isinstance(a, Array))
    return [p if p is not None else next(rest) for p in placed]


@_arguments.restated("spmd.make_array_from_single_device_arrays")
def make_array_from_single_device_arrays(shape, sharding, arrays, *, dtype=None):
    """jax.make_array_from_single_device_arrays: one Array (or NumPy array, put on its device)
    per addressable device of `sharding`. Arrays are matched to the devices by where they are
    (JAX's rule), NumPy arrays by order; Arrays on devices other than the sharding's, two on
    one device, or one on several are a ValueError."""
    if not isinstance(sharding, _spmd.Sharding):
        raise TypeError(f"make_array_from_single_device_arrays: sharding must be a Sharding, "
                        f"got {type(sharding).__name__}")
    arrays = list(arrays)
    devices = sharding.addressable_devices
    if len(arrays) != len(devices):
        raise _spmd.errors.InvalidArgument(
            f"make_array_from_single_device_arrays: {len(arrays)} arrays for the {len(devices)} "
            f"addressable devices of {sharding!r}")
    arrays = _by_device(arrays, devices)
    placed = [a if isinstance(a, Array) else _put(a, _spmd.SingleDeviceSharding(d))
              for a, d in zip(arrays, devices)]
    return _spmd.make_array_from_single_device_arrays(
        list(shape), sharding, placed, None if dtype is None else dtype_name(dtype))


@_arguments.restated("spmd.make_array_from_process_local_data")
def make_array_from_process_local_data(sharding, local_data, global_shape=None):
    """jax.make_array_from_process_local_data: this process's rows of the global array."""
    return _spmd._make_from_process_local_bytes(
        sharding, *_bytes(_host(local_data)), None if global_shape is None else list(global_shape))


@_arguments.restated("spmd.make_array_from_callback")
def make_array_from_callback(shape, sharding, data_callback, dtype=None):
    """jax.make_array_from_callback: data_callback(index) gives the block at `index` (a tuple of
    slices) for each of this process's devices."""
    def block(bounds):
        return _bytes(_host(data_callback(tuple(slice(a, b) for a, b in bounds))))

    return _spmd._make_from_callback(list(shape), sharding,
                                     None if dtype is None else dtype_name(dtype), block)
