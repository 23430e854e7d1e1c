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


__all__ = ["AxisType", "Mesh", "NamedSharding", "PartitionSpec", "PositionalSharding",
           "Sharding", "SingleDeviceSharding"]
