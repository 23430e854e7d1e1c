"""jax.jacrev, jax.jacfwd, jax.jacobian and jax.hessian: whole Jacobians as vmap over a basis.

jacrev maps the vector-Jacobian product over the rows of an identity (one backward pass per
output element, batched into one program); jacfwd maps the Jacobian-vector product (spmd's
jvp, _forward.py) over its columns. Each result has JAX's structure: the output's pytree, each
leaf replaced by the arguments' (a tuple when argnums is a tuple), with leaves shaped
out.shape + in.shape."""
import functools

import numpy as np

from . import _arguments
from . import numpy as snp
from ._core import has_traced
from ._forward import floating, lift, own_copies, pullback_of, split_aux, tangents_of
from .tree_util import tree_flatten, tree_unflatten


def _size(shape):
    return int(np.prod(shape, dtype=np.int64))


def _basis(shapes, dtypes):
    """The identity over the flattened leaves, split per leaf: leaf k gets [n, *shapes[k]]."""
    n = sum(_size(s) for s in shapes)
    parts, at = [], 0
    for shape, dtype in zip(shapes, dtypes):
        size = _size(shape)
        rows = snp.eye(n, size, -at, dtype=dtype) if n else snp.zeros((0, size), dtype)
        parts.append(snp.reshape(rows, (n,) + tuple(shape)))
        at += size
    return parts


def _check_argnums(name, argnums, count):
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    for i in nums:
        if not isinstance(i, (int, np.integer)) or not -count <= i < count:
            raise TypeError(f"{name}: argnums {argnums!r} is out of range for {count} positional "
                            "arguments")
    return tuple(int(i) % count for i in nums)


def _check_floating(name, leaves):
    for x in leaves:
        if not floating(x):
            raise TypeError(f"{name} requires real-valued inputs (input dtype that is a sub-dtype "
                            f"of np.floating or np.complexfloating), but got {x.dtype.name}. If "
                            "you want to use Boolean- or integer-valued inputs, use vjp or set "
                            "allow_int to True.")


def _arranged(rows_of, out_leaves, out_tree, in_leaves, in_trees, single, reverse):
    """The Jacobian's pytree from its blocks. rows_of[k] holds output k's derivative along the
    flattened inputs ([n_in, *out_k] forward) or the inputs' along the flattened outputs."""
    offsets, at = [], 0
    for x in (out_leaves if reverse else in_leaves):
        offsets.append(at)
        at += _size(x.shape)
    per_out = []
    for k, o in enumerate(out_leaves):
        blocks, j = [], 0
        for tree, count in in_trees:
            leaves = []
            for x in in_leaves[j:j + count]:
                leaves.append(_block(rows_of, k, j, o, x, offsets, reverse))
                j += 1
            blocks.append(tree_unflatten(tree, leaves))
        per_out.append(blocks[0] if single else tuple(blocks))
    return tree_unflatten(out_tree, per_out)


def _block(rows_of, k, j, o, x, offsets, reverse):
    """d out_k / d in_j, shaped out_k.shape + in_j.shape."""
    out_shape, in_shape = tuple(o.shape), tuple(x.shape)
    if reverse:  # rows_of[j]: [n_out, *in_j]; output k's rows
        rows = rows_of[j][offsets[k]:offsets[k] + _size(out_shape)]
        return snp.reshape(rows, out_shape + in_shape)
    cols = rows_of[k][offsets[j]:offsets[j] + _size(in_shape)]  # [n_in_j, *out_k]
    cols = snp.reshape(cols, in_shape + out_shape)
    rank_in = len(in_shape)
    order = tuple(range(rank_in, rank_in + len(out_shape))) + tuple(range(rank_in))
    return snp.transpose(cols, order)


def _split_args(args, nums):
    diff = [args[i] for i in nums]
    flat = [tree_flatten(a) for a in diff]
    leaves = [lift(x) for f, _ in flat for x in f]
    trees = [(tree, len(f)) for f, tree in flat]
    return leaves, trees


def _call_with(fun, args, nums, trees, leaves):
    """fun(*args) with the arguments `nums` rebuilt from `leaves`."""
    full, j = list(args), 0
    for i, (tree, count) in zip(nums, trees):
        full[i] = tree_unflatten(tree, leaves[j:j + count])
        j += count
    return fun(*full)


def _compiled_when_concrete(traced, fun):
    from ._jit import eager_program
    compiled = eager_program(traced)

    def wrapped(*args):
        return traced(*args) if has_traced(args) else compiled(*args)
    return functools.wraps(fun)(wrapped)


def _check_transform(name, fun, holomorphic):
    _arguments.check_callable(fun)
    if holomorphic:
        raise NotImplementedError(f"spmd.{name}: holomorphic=True needs complex dtypes, which "
                                  "spmd does not have")


def jacrev(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False):
    """jax.jacrev: the Jacobian by reverse mode, one vector-Jacobian product per output element
    (vmapped). holomorphic needs complex dtypes, which spmd lacks."""
    _check_transform("jacrev", fun, holomorphic)

    def traced(*args):
        nums = _check_argnums("jacrev", argnums, len(args))
        leaves, trees = _split_args(args, nums)
        if not allow_int:
            _check_floating("jacrev", leaves)
        xs = own_copies(leaves)
        out, aux = split_aux(_call_with(fun, args, nums, trees, xs), has_aux)
        out_leaves, out_tree = tree_flatten(out)
        out_leaves = [lift(o) for o in out_leaves]
        for o in out_leaves:
            if not floating(o):
                raise TypeError("jacrev requires real-valued outputs (output dtype that is a "
                                f"sub-dtype of np.floating), but got {o.dtype.name}. For "
                                "differentiation of functions with integer outputs, use "
                                "jax.vjp directly.")
        pullback = pullback_of(out_leaves, xs)
        basis = _basis([o.shape for o in out_leaves], [o.dtype for o in out_leaves])
        rows = _mapped(lambda *cts: tuple(pullback(list(cts))), basis,
                       [(x.shape, x.dtype) for x in xs])
        jac = _arranged(rows, out_leaves, out_tree, xs, trees, isinstance(argnums, int), True)
        return (jac, aux) if has_aux else jac
    return _compiled_when_concrete(traced, fun)


def jacfwd(fun, argnums=0, has_aux=False, holomorphic=False):
    """jax.jacfwd: the Jacobian by forward mode (spmd's jvp), one Jacobian-vector product per
    input element (vmapped). holomorphic needs complex dtypes, which spmd lacks."""
    _check_transform("jacfwd", fun, holomorphic)

    def traced(*args):
        nums = _check_argnums("jacfwd", argnums, len(args))
        leaves, trees = _split_args(args, nums)
        _check_floating("jacfwd", leaves)

        def at(*xs):
            return _call_with(fun, args, nums, trees, list(xs))
        pushed = functools.partial(_pushforward, at, leaves, has_aux)
        basis = _basis([x.shape for x in leaves], [x.dtype for x in leaves])
        out, aux = split_aux(at(*leaves), has_aux)  # the primal pass, for the output's types
        out_leaves, out_tree = tree_flatten(out)
        cols = _mapped(pushed, basis, [(o.shape, o.dtype) for o in out_leaves])
        jac = _arranged(cols, [lift(o) for o in out_leaves], out_tree, leaves, trees,
                        isinstance(argnums, int), False)
        return (jac, aux) if has_aux else jac
    return _compiled_when_concrete(traced, fun)


def _pushforward(at, leaves, has_aux, *tangents):
    _, touts, _ = tangents_of(at, leaves, tree_flatten(tuple(leaves))[1], list(tangents),
                              has_aux)
    return tuple(lift(t) for t in tree_flatten(touts)[0])


def _mapped(fn, basis, results):
    """fn mapped over the leading axis of the basis parts: one result per (shape, dtype) of
    `results`, batched first. A basis of no elements (zero-size arguments or outputs) gives
    results of no rows, as vmap cannot map over nothing."""
    if not basis or basis[0].shape[0] == 0:
        return [snp.zeros((0,) + tuple(shape), dtype) for shape, dtype in results]
    from ._transforms import vmap
    return list(vmap(fn)(*basis))


def jacobian(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False):
    """jax.jacobian: jacrev."""
    return jacrev(fun, argnums, has_aux, holomorphic, allow_int)


def hessian(fun, argnums=0, has_aux=False, holomorphic=False):
    """jax.hessian: jacfwd of jacrev, as JAX composes it."""
    return jacfwd(jacrev(fun, argnums, has_aux, holomorphic), argnums, has_aux, holomorphic)

