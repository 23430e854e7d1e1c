"""vmap, shard_map and pmap over spmd's C++ transformations: the function runs on traced values,
its arguments' and results' pytrees flattened around the C++ call."""
import threading

import numpy as np

from . import _arguments, _jit, _operators, _spmd
from . import numpy as jnp
from ._core import (Array, Tensor, _put, committed_like, has_traced,
                    make_array_from_process_local_data)
from ._jit import _state
from .tree_util import tree_flatten, tree_map, tree_unflatten


def _per_leaf(axes, args):
    """One in_axes entry per leaf: an int or None for all, else one entry per argument."""
    if axes is None or isinstance(axes, int):
        axes = (axes,) * len(args)
    out = []
    for a, arg in zip(axes, args):
        out.extend([a] * len(tree_flatten(arg)[0]))
    return out


def vmap(fun, in_axes=0, out_axes=0):
    """jax.vmap: in_axes an int, None, or one entry per positional argument (applied to every
    leaf of that argument); out_axes an int or None for every result leaf."""
    _arguments.check_callable(fun)
    def traced(*args):
        leaves, tree = tree_flatten(list(args))
        axes = _per_leaf(in_axes, args)
        call = _spmd._VmapCall(leaves, axes, [f"leaf {i}" for i in range(len(leaves))])
        out = fun(*tree_unflatten(tree, call.slices()))
        out_leaves, out_tree = tree_flatten(out)
        return tree_unflatten(out_tree, call.results(out_leaves, [out_axes]))

    compiled = _jit.eager_program(traced)

    def wrapped(*args):
        if has_traced(args):
            return traced(*args)
        return compiled(*args)

    return wrapped


def shard_map(f=None, mesh=None, in_specs=None, out_specs=None, *, axis_names=frozenset(),
              check_vma=True):
    """jax.shard_map(f, *, out_specs, in_specs, mesh=None, axis_names=frozenset(),
    check_vma=True): f runs on each device's blocks, its collectives (spmd.lax) naming the mesh's
    axes. in_specs and out_specs are pytree prefixes of the arguments and of f's result (a single
    PartitionSpec for all). mesh None: the mesh in scope (spmd.set_mesh). Also a decorator
    (f left out). Traced under jit, or called on arrays: then uncommitted inputs (NumPy arrays,
    Python scalars, a bare device_put) are first placed on the mesh by their in_specs, as JAX
    places them. check_vma=True types values by the axes they vary over and differentiates as
    JAX does (traced_shard_map.h); check_vma=False is JAX's unchecked form, as pmap's."""
    if f is None:
        return lambda g: shard_map(g, mesh, in_specs, out_specs, axis_names=axis_names,
                                   check_vma=check_vma)
    _arguments.check_callable(f)
    if out_specs is None:
        raise TypeError("shard_map() missing required keyword argument: 'out_specs'")
    if in_specs is None:
        raise ValueError("shard_map: give in_specs, a PartitionSpec (or a tree of them) for the "
                         "arguments; spmd does not infer them from the arguments' types")
    names = sorted(axis_names, key=str)

    def traced(*args):
        on = mesh if mesh is not None else _mesh_in_scope()
        leaves, tree = tree_flatten(list(args))
        # An array beside traced arguments is a constant of the program, as JAX captures it.
        leaves = [x if isinstance(x, Tensor) else
                  _operators._traced(x if isinstance(x, Array) else np.asarray(x))
                  for x in leaves]
        specs = _specs_per_leaf(in_specs, tuple(args), "in_specs")
        out_leaf_specs = []

        def body(blocks):
            with _BodyMesh(on):
                result = f(*tree_unflatten(tree, list(blocks)))
            out_leaves, out_tree = tree_flatten(result)
            out_leaf_specs.append((out_tree, _specs_per_leaf(out_specs, result, "out_specs")))
            return out_leaves

        outs = _spmd._shard_map(on, specs, lambda: out_leaf_specs[0][1], leaves, body,
                                check_vma=check_vma, axis_names=names)
        _state.shard_map_mesh = on
        return tree_unflatten(out_leaf_specs[0][0], outs)

    compiled = _jit.eager_program(traced)

    def call(*args):
        if has_traced(args):
            return traced(*args)
        on = mesh if mesh is not None else _mesh_in_scope()
        specs = _specs_per_leaf(in_specs, tuple(args), "in_specs")
        leaves, tree = tree_flatten(list(args))
        placed = [_placed(x, on, spec) for x, spec in zip(leaves, specs)]
        return compiled(*tree_unflatten(tree, placed))

    return call


class _BodyMesh:
    """While a shard_map or pmap body is traced: its mesh, innermost last (lax.axis_size reads
    the axes' sizes from it)."""
    _local = threading.local()

    def __init__(self, mesh):
        self._mesh = mesh

    def __enter__(self):
        stack = getattr(self._local, "stack", None)
        if stack is None:
            stack = self._local.stack = []
        stack.append(self._mesh)

    def __exit__(self, *exc):
        self._local.stack.pop()
        return False


def body_mesh():
    """The mesh of the shard_map or pmap body being traced on this thread, or None."""
    stack = getattr(_BodyMesh._local, "stack", None)
    return stack[-1] if stack else None


def _mesh_in_scope():
    mesh = _spmd.get_mesh()
    if mesh is None or not mesh.axis_names:
        raise ValueError("shard_map: no mesh given and none in scope; pass mesh= or use "
                         "spmd.set_mesh(mesh)")
    return mesh


def _placed(x, mesh, spec):
    """x as an Array on `mesh`: committed Arrays as they are, anything else (a NumPy array, a
    Python scalar, an uncommitted Array) laid out by its in_spec."""
    if isinstance(x, Array) and x.committed:
        return x
    return _put(np.asarray(x), _spmd.NamedSharding(mesh, spec))


def _specs_per_leaf(prefix, tree, what):
    """shard_map's in_specs or out_specs, a pytree prefix of `tree` with PartitionSpecs as its
    leaves, as one spec per leaf of `tree` (tree_flatten's order)."""
    if isinstance(prefix, _spmd.PartitionSpec):
        return [prefix] * len(tree_flatten(tree)[0])
    if isinstance(prefix, (tuple, list)) and isinstance(tree, (tuple, list)):
        if len(prefix) != len(tree):
            raise ValueError(f"shard_map {what}: {len(prefix)} entries for {len(tree)} "
                             f"{'arguments' if what == 'in_specs' else 'results'}; give one "
                             "PartitionSpec (or a tree of them) for each")
        return [s for p, t in zip(prefix, tree) for s in _specs_per_leaf(p, t, what)]
    if isinstance(prefix, dict) and isinstance(tree, dict) and set(prefix) == set(tree):
        return [s for k in sorted(tree) for s in _specs_per_leaf(prefix[k], tree[k], what)]
    raise ValueError(f"shard_map {what}: {prefix!r} is not a tree prefix of the "
                     f"{'arguments' if what == 'in_specs' else 'result'} (a PartitionSpec, or a "
                     "tuple, list or dict of them shaped like it)")


class _Pmapped:
    """jax.pmap(fun, axis_name): fun runs once per device of every process, each on its slice of
    the mapped arguments' leading axis; collectives over axis_name span every device of every
    process, in global device order. Every process passes local_device_count() slices and gets
    back an Array of its own devices' results, stacked along the leading axis.

    It is jit of a shard_map over the 1-D mesh of spmd.devices() named axis_name: the per-process
    slices become one global array split over that mesh (make_array_from_process_local_data), and
    each process's part of the result is read back from its shards."""

    def __init__(self, fun, axis_name, in_axes, out_axes):
        self._fun, self._in_axes, self._out_axes = fun, in_axes, out_axes
        self._axis = axis_name if axis_name is not None else "_pmap"
        self._compiled = None

    def _build(self):
        self._mesh = _mesh_of(_spmd.devices(), self._axis)
        self._local_mesh = _mesh_of(_spmd.local_devices(), self._axis)
        self._compiled = _jit.jit(self._global, static_argnums=0)

    def _global(self, mapped, *args):
        """The traced global computation: mapped[i] is True for arguments split over devices."""
        specs = [_spmd.PartitionSpec(self._axis) if m else _spmd.PartitionSpec() for m in mapped]
        fun, out_tree = self._fun, []

        def body(*blocks):
            args = [tree_map(_drop_leading, x) if m else x for x, m in zip(blocks, mapped)]
            leaves, tree = tree_flatten(fun(*args))
            out_tree.append(tree)
            return [_add_leading(leaf) for leaf in leaves]

        leaves, tree = tree_flatten(list(args))
        leaf_specs = [spec for a, spec in zip(args, specs) for _ in tree_flatten(a)[0]]

        def flat_body(blocks):
            with _BodyMesh(self._mesh):
                return body(*tree_unflatten(tree, list(blocks)))

        # JAX 0.10.2 runs pmap as a shard_map with check_vma=False.
        outs = _spmd._shard_map(self._mesh, leaf_specs, lambda: [_spmd.PartitionSpec(self._axis)],
                                leaves, flat_body, check_vma=False)
        return tree_unflatten(out_tree[0], outs)

    def __call__(self, *args):
        if self._compiled is None:
            self._build()
        axes = self._in_axes
        axes = (axes,) * len(args) if axes is None or isinstance(axes, int) else tuple(axes)
        if len(axes) != len(args):
            raise _spmd.errors.InvalidArgument(
                f"spmd.pmap: in_axes has {len(axes)} entries for {len(args)} arguments")
        mapped = tuple(a is not None for a in axes)
        placed = [tree_map(lambda x, a=a: self._place(x, a), arg) for arg, a in zip(args, axes)]
        out = self._compiled(mapped, *placed)
        leaves, tree = tree_flatten(out)
        out_axes = _axes_per_leaf(self._out_axes, out)
        local = [self._local_part(leaf, axis) for leaf, axis in zip(leaves, out_axes)]
        return tree_unflatten(tree, committed_like(local, tree_flatten(list(args))[0]))

    def _place(self, x, axis):
        host = np.asarray(x)
        if axis is None:
            return make_array_from_process_local_data(
                _spmd.NamedSharding(self._mesh, _spmd.PartitionSpec()), host)
        host = np.moveaxis(host, axis, 0) if axis != 0 else host
        count = _spmd.local_device_count()
        if host.ndim == 0 or host.shape[0] != count:
            raise _spmd.errors.InvalidArgument(
                f"spmd.pmap: a mapped argument's axis {axis} has size "
                f"{host.shape[axis] if host.ndim else 'none (a scalar)'}, but this process has "
                f"{count} local devices (jax.local_device_count()); pass one slice per local "
                "device")
        return make_array_from_process_local_data(
            _spmd.NamedSharding(self._mesh, _spmd.PartitionSpec(self._axis)), host)

    def _local_part(self, x, out_axis):
        """This process's part of the global result, as an Array on its own devices: its
        devices' results stacked along axis out_axis, or with out_axis None the first device's
        alone (JAX's unmapped output, which the function must make equal on every device),
        replicated."""
        stacked = _spmd._addressable_as(
            x, [_spmd.local_device_count()] + list(x.shape[1:]),
            _spmd.NamedSharding(self._local_mesh, _spmd.PartitionSpec(self._axis)))
        if out_axis is None:
            first = np.asarray(stacked.addressable_shards[0].data)[0]
            return _put(first, _spmd.NamedSharding(self._local_mesh, _spmd.PartitionSpec()))
        rank = len(stacked.shape)
        if not 0 <= out_axis < rank:  # JAX's rule: non-negative (a negative one is garbage there)
            raise _spmd.errors.InvalidArgument(
                f"spmd.pmap: out_axes {out_axis} is not an axis of the stacked result of rank "
                f"{rank}; give a non-negative axis, as jax.pmap requires")
        if out_axis == 0:
            return stacked
        order = list(range(1, out_axis + 1)) + [0] + list(range(out_axis + 1, rank))
        return jnp.transpose(stacked, order)


def _axes_per_leaf(prefix, tree):
    """pmap's out_axes, an int or None for every leaf or a tree prefix of the result, as one
    entry per leaf of the result (tree_flatten's order)."""
    if prefix is None or isinstance(prefix, int):
        return [prefix] * len(tree_flatten(tree)[0])
    if isinstance(prefix, (tuple, list)) and isinstance(tree, (tuple, list)) \
            and len(prefix) == len(tree):
        return [a for p, t in zip(prefix, tree) for a in _axes_per_leaf(p, t)]
    if isinstance(prefix, dict) and isinstance(tree, dict) and set(prefix) == set(tree):
        return [a for k in sorted(tree) for a in _axes_per_leaf(prefix[k], tree[k])]
    raise _spmd.errors.InvalidArgument(
        f"spmd.pmap: out_axes {prefix!r} is not a prefix of the result's structure")


def _mesh_of(devices, axis):
    return _spmd.Mesh(list(devices), [len(devices)], [axis], [_spmd.AxisType.Auto])


def _drop_leading(block):
    return jnp.reshape(block, list(block.shape[1:]))


def _add_leading(block):
    return jnp.reshape(block, [1] + list(block.shape))


def pmap(fun, axis_name=None, *, in_axes=0, out_axes=0):
    """jax.pmap (see _Pmapped). axis_name is a string or None (JAX takes any hashable name, and
    fails at the call for one that is not a string)."""
    _arguments.check_callable(fun)
    if axis_name is not None and not isinstance(axis_name, str):
        hash(axis_name)  # an unhashable name is JAX's TypeError, at once
        raise TypeError(f"pmap: axis_name must be a string (it names a mesh axis), not "
                        f"{axis_name!r}")
    return _Pmapped(fun, axis_name, in_axes, out_axes)
