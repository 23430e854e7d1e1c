"""spmd.sharding: jax.sharding's Mesh, Sharding, NamedSharding, SingleDeviceSharding,
PositionalSharding, PartitionSpec and AxisType."""
import numpy as _np

from . import _arguments, _spmd

PartitionSpec = _spmd.PartitionSpec
Sharding = _spmd.Sharding
NamedSharding = _spmd.NamedSharding
SingleDeviceSharding = _spmd.SingleDeviceSharding
AxisType = _spmd.AxisType

# What every sharding answers besides the C++ interface: jax's device_set and
# addressable_devices as sets.
Sharding.device_set = property(lambda self: set(self._device_assignment))
_arguments.public_init(NamedSharding, "spmd.sharding.NamedSharding")
_arguments.public_init(SingleDeviceSharding, "spmd.sharding.SingleDeviceSharding")
_arguments.public_init(Sharding, "spmd.sharding.Sharding",
                       "it is the base of NamedSharding and SingleDeviceSharding; make one of "
                       "those")
_arguments.public_init(_spmd.Array, "spmd.Array",
                       "make one with spmd.device_put, spmd.numpy.asarray or a computation")
_arguments.public_init(_spmd.Tensor, "spmd.Tensor",
                       "it is a traced value, which jit, grad, vmap and shard_map make")


_flat_devices = _spmd.Mesh.devices


def _devices_grid(mesh):
    """jax's Mesh.devices: an ndarray of Devices shaped like the mesh."""
    grid = _np.empty(len(_flat_devices.__get__(mesh)), dtype=object)
    grid[:] = _flat_devices.__get__(mesh)
    return grid.reshape(tuple(mesh.axis_sizes))


def _enter(mesh):
    """`with mesh:` sets it as the mesh in scope for this thread (jax.set_mesh's), restoring the
    previous one on exit."""
    stack = getattr(_scopes, "stack", None)
    if stack is None:
        stack = _scopes.stack = []
    stack.append(_spmd.get_mesh())
    _spmd._set_mesh(mesh)
    return mesh


def _exit(mesh, *exc):
    _spmd._set_mesh(_scopes.stack.pop())
    return False


_scopes = __import__("threading").local()
_axis_names = _spmd.Mesh.axis_names
_spmd.Mesh.axis_names = property(lambda self: tuple(_axis_names.__get__(self)))
_axis_types = _spmd.Mesh.axis_types
_spmd.Mesh.axis_types = property(lambda self: tuple(_axis_types.__get__(self)))
_spmd.Mesh.devices = property(_devices_grid)
_spmd.Mesh.shape = property(lambda self: dict(zip(self.axis_names, self.axis_sizes)))
_spmd.Mesh.size = property(lambda self: int(_np.prod(self.axis_sizes, dtype=_np.int64)))
_spmd.Mesh.__enter__ = _enter
_spmd.Mesh.__exit__ = _exit


@_arguments.restated("spmd.sharding.Mesh")
def Mesh(devices, axis_names, axis_types=None):  # noqa: N802 - jax.sharding.Mesh's name
    """jax.sharding.Mesh: `devices` a nested list or a NumPy array of Devices; axes Auto unless
    axis_types says otherwise (as jax.sharding.Mesh)."""
    grid = _np.asarray(devices, dtype=object)
    names = [axis_names] if isinstance(axis_names, str) else list(axis_names)
    types = list(axis_types) if axis_types is not None else [AxisType.Auto] * len(names)
    return _spmd.Mesh(list(grid.reshape(-1)), list(grid.shape), names, types)


@_arguments.restated("spmd.sharding.PositionalSharding")
def PositionalSharding(devices):  # noqa: N802 - jax.sharding.PositionalSharding's name
    """jax.sharding.PositionalSharding (seed 002 uses it; JAX has removed it, so new code writes
    a NamedSharding): `devices` a list or N-d array of Devices; the result's reshape(shape) and
    replicate(axis) lay the devices over an array of that rank."""
    grid = _np.asarray(devices, dtype=object)
    return _spmd.PositionalSharding(list(grid.reshape(-1)), list(grid.shape))


def make_single_device_sharding(device, *, memory_kind=None):
    """jax.sharding.make_single_device_sharding: the whole array on `device`."""
    if memory_kind not in (None, "device"):
        raise ValueError(f"make_single_device_sharding: memory_kind {memory_kind!r}; spmd's "
                         "arrays live in device memory only")
    return SingleDeviceSharding(device)


def reshard(x, sharding):
    """jax.sharding.reshard (jax.reshard): spmd.reshard."""
    from . import reshard as top
    return top(x, sharding)


def get_mesh():
    """jax.sharding.get_mesh: the mesh in scope on this thread (set_mesh's, or `with mesh:`),
    or None."""
    return _spmd.get_mesh()


def set_mesh(mesh):
    """jax.sharding.set_mesh (also spmd.set_mesh): the mesh in scope for this thread; as a
    context manager it restores the previous one on exit."""
    from . import set_mesh as scoped
    return scoped(mesh)


__all__ = ["AxisType", "get_mesh", "make_single_device_sharding", "reshard", "set_mesh", "Mesh",
           "NamedSharding", "PartitionSpec", "PositionalSharding",
           "Sharding", "SingleDeviceSharding"]
