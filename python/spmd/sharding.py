"""spmd.sharding: jax.sharding's Mesh, NamedSharding, PartitionSpec and AxisType."""
from . import _spmd

PartitionSpec = _spmd.PartitionSpec
NamedSharding = _spmd.NamedSharding
AxisType = _spmd.AxisType


def Mesh(devices, axis_names, axis_types=None):  # noqa: N802 - jax.sharding.Mesh's name
    """jax.sharding.Mesh: `devices` a nested list or a NumPy array of Devices; axes Auto unless
    axis_types says otherwise (as jax.sharding.Mesh)."""
    import numpy as np

    grid = np.asarray(devices, dtype=object)
    names = [axis_names] if isinstance(axis_names, str) else list(axis_names)
    types = list(axis_types) if axis_types is not None else [AxisType.Auto] * len(names)
    return _spmd.Mesh(list(grid.reshape(-1)), list(grid.shape), names, types)
