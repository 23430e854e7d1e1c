"""spmd: JAX's multi-process programming model over spmd's C++ engine, with jax's module layout
(`import spmd as jax`). This package is a thin layer over the C++ API (python/src/ binds it)."""
import contextlib

from . import _operators  # noqa: F401 - binds Python's operators on Arrays and Tensors
from . import _methods  # noqa: F401 - binds jax.Array's methods (sum, astype, [], .at) on them
from . import (_arguments, _spmd, checkpoint, data, debug, distributed, dtypes, errors,
               experimental, lax, nn, numpy, ops, optax, random, scipy, sharding, tree, tree_util,
               typing)
from ._callbacks import pure_callback
from ._config import config
from ._core import (Array, Shard, Tensor, device_put, make_array_from_callback,
                    make_array_from_process_local_data, make_array_from_single_device_arrays)
from ._custom_jvp import custom_jvp
from ._custom_vjp import custom_vjp
from ._forward import jvp, linear_transpose, linearize
from ._jacobians import hessian, jacfwd, jacobian, jacrev
from ._jit import clear_caches, disable_jit, grad, value_and_grad, vjp
from ._jit import user_jit as jit
from ._remat import checkpoint as remat
from ._remat import checkpoint_policies
from ._shapes import ShapeDtypeStruct, eval_shape
from ._utilities import (default_backend, device_get, effects_barrier, ensure_compile_time_eval,
                         named_call, named_scope, process_indices)
from ._transforms import pmap, shard_map, vmap
from ._typeof import typeof
from .sharding import AxisType, NamedSharding, PartitionSpec
from .tree_util import tree_map

devices = _arguments.public("spmd.devices", _spmd.devices)
local_devices = _arguments.public("spmd.local_devices", _spmd.local_devices)
device_count = _arguments.public("spmd.device_count", _spmd.device_count)
local_device_count = _arguments.public("spmd.local_device_count", _spmd.local_device_count)
process_index = _arguments.public("spmd.process_index", _spmd.process_index)
process_count = _arguments.public("spmd.process_count", _spmd.process_count)
_make_mesh = _arguments.public("spmd.make_mesh", _spmd.make_mesh)


def make_mesh(axis_shapes, axis_names, axis_types=None, *, devices=None):
    """jax.make_mesh: a mesh of the devices shaped axis_shapes, named axis_names (a str names
    one axis, as JAX's)."""
    if isinstance(axis_names, str):
        axis_names = (axis_names,)
    given = (axis_shapes, axis_names) + (() if axis_types is None else (axis_types,))
    return _make_mesh(*given, **({} if devices is None else {"devices": devices}))


P = PartitionSpec


def block_until_ready(x):
    """jax.block_until_ready: waits for every Array of the pytree `x`, and returns `x`."""
    for leaf in tree_util.tree_leaves(x):
        if hasattr(leaf, "block_until_ready"):
            leaf.block_until_ready()
    return x


def reshard(x, sharding):
    """jax.reshard: an Array device_put to `sharding`; inside jit, the value moved (and on a mesh
    with Explicit axes retyped) to it."""
    if isinstance(x, Tensor):
        if isinstance(sharding, PartitionSpec):
            sharding = NamedSharding(x.sharding.mesh, sharding)
        return _spmd.reshard_traced(x, sharding)
    return device_put(x, sharding)


class _MeshScope(contextlib.AbstractContextManager):
    def __init__(self, mesh):
        if mesh is not None and not isinstance(mesh, _spmd.Mesh):
            raise TypeError(f"set_mesh: a Mesh (or None) expected, got {type(mesh).__name__}")
        self._previous = _spmd.get_mesh()
        _spmd._set_mesh(mesh)

    def __exit__(self, *exc):
        _spmd._set_mesh(self._previous)
        return False


def set_mesh(mesh):
    """jax.set_mesh: sets the mesh in scope for this thread; as a context manager
    (`with spmd.set_mesh(mesh):`) it restores the previous one on exit."""
    return _MeshScope(mesh)


__all__ = ["Array", "AxisType", "NamedSharding", "P", "PartitionSpec", "ShapeDtypeStruct",
           "Shard", "Tensor", "block_until_ready", "checkpoint", "checkpoint_policies",
           "clear_caches", "config", "custom_jvp", "custom_vjp", "data", "default_backend",
           "device_count", "device_get", "device_put", "devices", "disable_jit", "distributed",
           "ensure_compile_time_eval", "errors", "eval_shape", "experimental", "grad", "hessian",
           "jacfwd", "jacobian", "jacrev", "jit", "jvp", "lax", "linear_transpose", "linearize",
           "local_device_count", "local_devices", "make_array_from_callback",
           "make_array_from_process_local_data", "make_array_from_single_device_arrays",
           "make_mesh", "named_call", "named_scope", "nn", "numpy", "ops", "optax", "pmap",
           "process_count", "process_index", "process_indices", "random", "remat", "reshard",
           "set_mesh", "shard_map", "sharding", "tree", "tree_map", "tree_util", "typeof",
           "value_and_grad", "vjp", "vmap"]
