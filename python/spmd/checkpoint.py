"""spmd.checkpoint: sharded checkpoints of pytrees of Arrays over spmd/checkpoint.h (Zarr v2
directories, committed atomically, checksummed; Orbax's role in JAX). restore() also reads the
checkpoints Orbax writes, and save(..., format="orbax") writes ones Orbax restores. A leaf is stored under its
path in the tree, its keys joined by '/' ({"layer": {"w": ...}} as "layer/w"), so a checkpoint
saved from a tree restores into the same structure, onto any layout and any number of processes.

jax.checkpoint is JAX's rematerialisation decorator; this module is spmd's checkpointing, named
by the issue that asked for it. So that `import spmd as jax` keeps JAX's meaning, the module is
also callable: `spmd.checkpoint(f, policy=...)` is spmd.remat (_remat.py), and its attributes
are this module's functions.)"""
import os as _os
import sys as _sys
import types as _types

from . import _arguments, _spmd
from ._core import Array as _Array
from ._tree_keys import plain_key as _plain_key
from .tree_util import tree_flatten_with_path as _tree_flatten_with_path
from .tree_util import tree_unflatten as _tree_unflatten

_c = _spmd.checkpoint


def _name(path):
    return "/".join(str(_plain_key(k)) for k in path)


def _named(tree):
    """{name: leaf} of a pytree, in leaf order, and its structure."""
    pairs, treedef = _tree_flatten_with_path(tree)
    names = {}
    for path, leaf in pairs:
        name = _name(path)
        if name in names:
            raise _spmd.errors.InvalidArgument(
                f"spmd.checkpoint: two leaves are both named '{name}'")
        names[name] = leaf
    return names, treedef


def _arrays(tree):
    """{name: Array} of the pytree of Arrays `tree`; TypeError naming a leaf that is not one."""
    arrays, _ = _named(tree)
    for name, a in arrays.items():
        if not isinstance(a, _Array):
            raise TypeError(f"spmd.checkpoint: leaf '{name}' is a {type(a).__name__}, not an "
                            "spmd.Array")
    return arrays


def _sequence_nodes(tree):
    """The names of the pytree's nodes whose children are a sequence's elements (integer keys):
    an Orbax-format checkpoint types them so, and Orbax restores lists where the tree had them."""
    pairs, _ = _tree_flatten_with_path(tree)
    return {_name(path[:i]) for path, _ in pairs for i, k in enumerate(path)
            if isinstance(_plain_key(k), int) and not isinstance(_plain_key(k), bool)}


def _nested(flat):
    """{"a/b": x} as {"a": {"b": x}}."""
    out = {}
    for name, value in flat.items():
        node = out
        *parents, last = name.split("/")
        for p in parents:
            node = node.setdefault(p, {})
        node[last] = value
    return out


def _restore_as(read_all, read, target):
    """The arrays laid out as `target`: one Sharding for every array of the checkpoint
    (read_all(sharding) restores them all; the result a nested dict by names), or a pytree of
    Shardings or Arrays (their shardings) naming the arrays to restore (read({name: Sharding});
    the result that pytree)."""
    if isinstance(target, _spmd.Sharding):
        return _nested(read_all(target))
    leaves, treedef = _named(target)
    flat = read({n: (x.sharding if isinstance(x, _Array) else x) for n, x in leaves.items()})
    return _tree_unflatten(treedef, [flat[n] for n in leaves])


@_arguments.restated("spmd.checkpoint.save")
def save(directory, tree, *, step=None, metrics=None, user=None, compression="zstd",
         overwrite=False, format="spmd"):  # noqa: A002 (the issue's and Orbax's word)
    """Saves the pytree of Arrays `tree` to `directory` (collective: every process calls it with
    the same tree). `directory` must be new or an empty directory; a committed checkpoint there is
    replaced atomically with overwrite=True, and anything else is refused with AlreadyExists
    (nothing spmd did not write is ever deleted). format="orbax" also writes what Orbax reads:
    orbax.checkpoint.StandardCheckpointer().restore(directory, abstract_tree) restores it in JAX
    (spmd/checkpoint.h, Format::kOrbax)."""
    _c.save(_os.fspath(directory), _arrays(tree), compression, step, metrics or {}, user or {},
            overwrite, format, _sequence_nodes(tree) if format == "orbax" else set())


@_arguments.restated("spmd.checkpoint.restore")
def restore(directory, target):
    """The checkpoint at `directory` laid out as `target`: a Sharding for every array (the result
    a nested dict by names), or a pytree of Shardings or Arrays (the result that pytree, each
    leaf restored onto the leaf's sharding). Not collective: each process reads its shards."""
    directory = _os.fspath(directory)
    return _restore_as(lambda sharding: _c.restore_onto(directory, sharding),
                       lambda shardings: _c.restore(directory, shardings), target)


is_committed = _arguments.public("spmd.checkpoint.is_committed", _c.is_committed)
read_metadata = _arguments.public("spmd.checkpoint.read_metadata", _c.read_metadata)


class CheckpointManager:
    """Numbered checkpoints under one directory with a retention policy (Orbax's
    CheckpointManager, over spmd::checkpoint::CheckpointManager)."""

    @_arguments.restated("spmd.checkpoint.CheckpointManager")
    def __init__(self, directory, *, max_to_keep=None, keep_best=None, best_metric="",
                 best_mode_max=False, save_interval_steps=1):
        self._core = _c.CheckpointManager(_os.fspath(directory), max_to_keep, keep_best,
                                          best_metric, best_mode_max, save_interval_steps)

    @_arguments.restated("spmd.checkpoint.CheckpointManager.should_save")
    def should_save(self, step):
        return self._core.should_save(step)

    @_arguments.restated("spmd.checkpoint.CheckpointManager.save")
    def save(self, step, tree, *, metrics=None, user=None):
        """Saves `tree` as `step` when should_save(step) (collective); whether it saved."""
        return self._core.save(step, _arrays(tree), metrics or {}, user or {})

    def all_steps(self):
        return self._core.all_steps()

    def latest_step(self):
        return self._core.latest_step()

    @_arguments.restated("spmd.checkpoint.CheckpointManager.restore")
    def restore(self, step, target):
        """Step `step` laid out as `target` (see spmd.checkpoint.restore)."""
        return _restore_as(lambda sharding: self._core.restore_onto(step, sharding),
                           lambda shardings: self._core.restore(step, shardings), target)

    @_arguments.restated("spmd.checkpoint.CheckpointManager.metadata")
    def metadata(self, step):
        return self._core.metadata(step)


__all__ = ["CheckpointManager", "is_committed", "read_metadata", "restore", "save"]


class _CallableModule(_types.ModuleType):
    """This module's type: calling it is jax.checkpoint (rematerialisation)."""

    def __call__(self, fun=None, **options):
        from ._remat import checkpoint as remat
        if fun is None:  # @spmd.checkpoint(policy=...) as a decorator factory
            return lambda f: remat(f, **options)
        return remat(fun, **options)


_sys.modules[__name__].__class__ = _CallableModule
