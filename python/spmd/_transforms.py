"""vmap and shard_map over spmd's C++ transformations: the function runs on traced values, its
arguments' and results' pytrees flattened around the C++ call."""
from . import _jit, _spmd
from ._core import has_traced
from .tree_util import tree_flatten, tree_unflatten


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
    def traced(*args):
        leaves, tree = tree_flatten(list(args))
        axes = _per_leaf(in_axes, args)
        call = _spmd._VmapCall(leaves, axes, [f"leaf {i}" for i in range(len(leaves))])
        out = fun(*tree_unflatten(tree, call.slices()))
        out_leaves, out_tree = tree_flatten(out)
        return tree_unflatten(out_tree, call.results(out_leaves, [out_axes]))

    compiled = _jit.jit(traced)

    def wrapped(*args):
        if has_traced(args):
            return traced(*args)
        return compiled(*args)

    return wrapped


def shard_map(f, mesh, in_specs, out_specs):
    """jax.shard_map inside a traced function: f runs on each device's blocks (psum and pmean in
    spmd.lax name the mesh's axes); in_specs and out_specs one PartitionSpec per argument and
    result (a single spec for a single result)."""
    single = isinstance(out_specs, _spmd.PartitionSpec)
    outs = [out_specs] if single else list(out_specs)
    ins = [in_specs] if isinstance(in_specs, _spmd.PartitionSpec) else list(in_specs)

    def call(*args):
        def body(blocks):
            result = f(*blocks)
            return [result] if single else list(result)
        results = _spmd._shard_map(mesh, ins, outs, list(args), body)
        return results[0] if single else tuple(results)

    return call
