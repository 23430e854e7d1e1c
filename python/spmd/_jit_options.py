"""jit's in_shardings, out_shardings and donation (jit in _jit.py makes a ShardedJitted when any
is given): arguments placed or checked against in_shardings before the call, outputs laid out by
a sharding constraint inside the traced function, donated Arrays deleted after the call."""
import inspect

import numpy as np

from . import _spmd
from ._core import Array, Tensor, device_put
from ._jit import _Jitted
from .tree_util import tree_flatten, tree_unflatten, _up_to

_SHARDING_TYPES = (_spmd.Sharding, _spmd.PartitionSpec)


def _is_spec_leaf(x):
    return x is None or isinstance(x, _SHARDING_TYPES)


def _as_sharding(s):
    """A PartitionSpec on the mesh in scope (set_mesh), as JAX takes one; a Sharding as it is."""
    if isinstance(s, _spmd.PartitionSpec):
        mesh = _spmd.get_mesh()
        if mesh is None:
            raise ValueError(f"spmd.jit: the PartitionSpec {s!r} in in_shardings/out_shardings "
                             "needs a mesh in scope (with spmd.set_mesh(mesh):); or give a "
                             "NamedSharding")
        return _spmd.NamedSharding(mesh, s)
    return s


def _pairs(shardings, tree, what):
    """(sharding, leaf) for every leaf of `tree` under the pytree prefix `shardings` (one
    Sharding broadcasts over the whole tree); a ValueError naming where the prefix differs."""
    leaves, treedef = tree_flatten(shardings, is_leaf=_is_spec_leaf)
    subtrees = []
    try:
        _up_to(treedef, tree, (), subtrees)
    except ValueError as error:
        raise ValueError(f"spmd.jit: {what} is not a pytree prefix of the arguments: "
                         f"{error}") from None
    return [(s, leaf) for s, sub in zip(leaves, subtrees) for leaf in tree_flatten(sub)[0]]


def _place(sharding, x):
    """x laid out as `sharding` (None: as it is). An uncommitted Array, NumPy data or a Python
    scalar is placed; a committed Array laid out otherwise is JAX's ValueError."""
    if sharding is None:
        return x
    sharding = _as_sharding(sharding)
    if isinstance(x, Array) and getattr(x, "_committed", True):
        if x.sharding != sharding:
            raise ValueError(
                "Sharding passed to jit does not match the sharding on the respective arg. Got "
                f"jit sharding: {sharding!r} and arg sharding: {x.sharding!r} for arg shape: "
                f"{x.shape}. device_put the argument to the sharding first.")
        return x
    if isinstance(x, (bool, int, float)):
        return x  # a weak scalar stays one (JAX replicates it)
    return device_put(x if isinstance(x, Array) else np.asarray(x), sharding)


class ShardedJitted(_Jitted):
    def __init__(self, fun, in_shardings, out_shardings, static_argnums, static_argnames,
                 donate_argnums, donate_argnames):
        super().__init__(fun, static_argnums, static_argnames)
        self._in_shardings = in_shardings
        self._donate = (donate_argnums,) if isinstance(donate_argnums, int) else \
            tuple(donate_argnums)
        self._donate_names = (donate_argnames,) if isinstance(donate_argnames, str) else \
            tuple(donate_argnames)
        if self._donate_names:
            self._donate += _positions(fun, self._donate_names)
        if out_shardings is not None:
            self._fun = _constrained(fun, out_shardings)
            # Uncommitted arguments (a PRNGKey, NumPy data) go to the outputs' mesh, as JAX
            # runs the computation where out_shardings puts it.
            self._shard_map_mesh = _mesh_of(out_shardings)

    def __call__(self, *args, **kwargs):
        return self._call_slow(*args, **kwargs)  # placement and donation on every call

    def _call_slow(self, *args, **kwargs):
        if any(isinstance(leaf, Tensor) for leaf in tree_flatten((args, kwargs))[0]):
            return self._fun(*args, **kwargs)  # inlined into the enclosing trace
        if self._in_shardings is not None:
            args = self._placed(args)
        out = super()._call_slow(*args, **kwargs)
        for i in self._donate:
            for leaf in tree_flatten(args[i] if i < len(args) else None)[0]:
                if isinstance(leaf, Array) and not leaf.is_deleted():
                    leaf.delete()
        for name in self._donate_names:
            for leaf in tree_flatten(kwargs.get(name))[0]:
                if isinstance(leaf, Array) and not leaf.is_deleted():
                    leaf.delete()
        return out

    def _placed(self, args):
        dynamic = tuple(a for i, a in enumerate(args) if i not in self._static)
        shardings = self._in_shardings
        if isinstance(shardings, list):
            shardings = tuple(shardings)
        if isinstance(shardings, tuple) and len(shardings) != len(dynamic):
            raise ValueError(f"spmd.jit: in_shardings has {len(shardings)} entries but the "
                             f"function was called with {len(dynamic)} positional arguments")
        if not isinstance(shardings, tuple):
            shardings = (shardings,) * len(dynamic)
        placed = iter([_place(s, x) for s, x in _pairs(shardings, dynamic, "in_shardings")])
        _, treedef = tree_flatten(dynamic)
        dynamic = iter(tree_unflatten(treedef, list(placed)))
        return tuple(a if i in self._static else next(dynamic) for i, a in enumerate(args))


def _mesh_of(shardings):
    """The mesh of the first NamedSharding among `shardings` (a pytree of them), or None."""
    for s in tree_flatten(shardings, is_leaf=_is_spec_leaf)[0]:
        if isinstance(s, _spmd.NamedSharding):
            return s.mesh
    return None


def _positions(fun, names):
    """The positions of the named parameters of `fun` (donate_argnames as donate_argnums)."""
    try:
        params = list(inspect.signature(fun).parameters)
    except (TypeError, ValueError):
        return ()
    return tuple(params.index(n) for n in names if n in params)


def _laid_out(x, sharding):
    """x laid out as `sharding`: a sharding constraint on a mesh of Auto axes, a reshard (which
    retypes it) where the mesh has Explicit ones, as JAX's out_shardings does on each."""
    mesh = getattr(sharding, "mesh", None)
    if mesh is not None and _spmd.AxisType.Explicit in list(mesh.axis_types):
        return _spmd.reshard_traced(x, sharding)
    return _spmd.with_sharding_constraint(x, sharding)


def _constrained(fun, out_shardings):
    def constrained(*args, **kwargs):
        out = fun(*args, **kwargs)
        pairs = _pairs(out_shardings, out, "out_shardings")
        laid = [x if s is None else _laid_out(x, _as_sharding(s)) for s, x in pairs]
        return tree_unflatten(tree_flatten(out)[1], laid)
    constrained.__name__ = getattr(fun, "__name__", "fn")
    return constrained
