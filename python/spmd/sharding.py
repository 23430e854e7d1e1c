"""spmd.sharding: jax.sharding's Mesh, Sharding, NamedSharding, SingleDeviceSharding,
PositionalSharding, PartitionSpec and AxisType."""
import numpy as _np

from . import _spmd

PartitionSpec = _spmd.PartitionSpec
Sharding = _spmd.Sharding
NamedSharding = _spmd.NamedSharding
SingleDeviceSharding = _spmd.SingleDeviceSharding
AxisType = _spmd.AxisType

# What every sharding answers besides the C++ interface: jax's device_set and
# addressable_devices as sets.
Sharding.device_set = property(lambda self: set(self._device_assignment))


def Mesh(devices, axis_names, axis_types=None):  # noqa: N802 - jax.sharding.Mesh's name
    """jax.sharding.Mesh: `devices` a nested list or a NumPy array of Devices; axes Auto unless
    axis_types says otherwise (as jax.sharding.Mesh)."""
    grid = _np.asarray(devices, dtype=object)
    names = [axis_names] if isinstance(axis_names, str) else list(axis_names)
    types = list(axis_types) if axis_types is not None else [AxisType.Auto] * len(names)
    return _spmd.Mesh(list(grid.reshape(-1)), list(grid.shape), names, types)


def PositionalSharding(devices):  # noqa: N802 - jax.sharding.PositionalSharding's name
    """jax.sharding.PositionalSharding (seed 002 uses it; JAX has removed it, so new code writes
    a NamedSharding): `devices` a list or N-d array of Devices; the result's reshape(shape) and
    replicate(axis) lay the devices over an array of that rank."""
    grid = _np.asarray(devices, dtype=object)
    return _spmd.PositionalSharding(list(grid.reshape(-1)), list(grid.shape))


__all__ = ["AxisType", "Mesh", "NamedSharding", "PartitionSpec", "PositionalSharding",
           "Sharding", "SingleDeviceSharding"]
