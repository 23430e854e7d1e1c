"""spmd.lax: the collectives of a shard_map body over named mesh axes (psum, pmean, pmax, pmin,
all_gather, psum_scatter, ppermute, axis_index, pcast), with_sharding_constraint, stop_gradient,
rsqrt and logistic, lax's element-wise functions (_lax_elementwise.py: add, select, clamp, …;
_lax_shapes.py: reshape, dynamic_slice, pad, …; _lax_combinators.py: reduce, cummax, top_k, dot,
map; _lax_windows.py: associative_scan, reduce_window; this module's max, min, abs, round, pow, slice and map are lax's, so its own code calls
builtins' by name).
Inside a shard_map with check_vma (the default) values are typed by the axes
they vary over, as in JAX 0.10.2 (include/spmd/traced_shard_map.h)."""
import builtins

import numpy as _np

from . import _arguments, _spmd, numpy as _numpy
from ._core import Tensor as _Tensor
from .tree_util import tree_map as _tree_map


def _collective(name, reduce, x, axis_name):
    def one(leaf):
        if isinstance(leaf, _Tensor) and _spmd._in_shard_map_function():
            return reduce(leaf, axis_name)
        if not isinstance(leaf, _Tensor):
            _arguments.check_arraylike(name, leaf)
        # JAX's error for a collective outside a mapped function, traced under jit or not.
        raise NameError(f"unbound axis name: {axis_name} ({name} runs inside a shard_map or "
                        f"pmap function)")
    return _tree_map(one, x)


def psum(x, axis_name):
    """jax.lax.psum: each array of the pytree `x` summed over the mesh axes `axis_name` (a name
    or a tuple of names), inside a shard_map or pmap function."""
    return _collective("psum", _spmd.psum, x, axis_name)


def pmean(x, axis_name):
    """jax.lax.pmean: as psum, divided by the number of devices along the axes."""
    return _collective("pmean", _spmd.pmean, x, axis_name)


def pmax(x, axis_name):
    """jax.lax.pmax: the largest of the devices' values along the axes (no derivative)."""
    return _collective("pmax", _spmd.pmax, x, axis_name)


def pmin(x, axis_name):
    """jax.lax.pmin: the smallest of the devices' values along the axes (no derivative)."""
    return _collective("pmin", _spmd.pmin, x, axis_name)


def all_gather(x, axis_name, *, axis_index_groups=None, axis=0, tiled=False, to="varying"):
    """jax.lax.all_gather: every device's value along the axes, in axis_index order, stacked
    along a new dimension `axis` (or, tiled, joined along dimension `axis`); it varies over
    them."""
    _no_groups("all_gather", axis_index_groups)
    if to != "varying":
        raise ValueError(f"all_gather: to={to!r} is not supported; spmd gathers to 'varying'")
    return _collective("all_gather", lambda v, a: _spmd.all_gather(v, a, axis, tiled), x,
                       axis_name)


def psum_scatter(x, axis_name, *, scatter_dimension=0, axis_index_groups=None, tiled=False):
    """jax.lax.psum_scatter: the sum over the axes, each device keeping its part of dimension
    scatter_dimension (tiled: a 1/n slice; else that dimension, of size n, is dropped)."""
    _no_groups("psum_scatter", axis_index_groups)
    return _collective("psum_scatter",
                       lambda v, a: _spmd.psum_scatter(v, a, scatter_dimension, tiled), x,
                       axis_name)


def ppermute(x, axis_name, perm):
    """jax.lax.ppermute: for each (source, target) pair of axis indices, target's result is
    source's value; devices that are no target get zeros."""
    pairs = [(int(a), int(b)) for a, b in perm]
    return _collective("ppermute", lambda v, a: _spmd.ppermute(v, a, pairs), x, axis_name)


def axis_index(axis_name):
    """jax.lax.axis_index: this device's position along the axes (int32; over a tuple the first
    axis is major)."""
    if not _spmd._in_shard_map_function():
        raise NameError(f"unbound axis name: {axis_name} (axis_index runs inside a shard_map or "
                        "pmap function)")
    return _spmd.axis_index(axis_name)


def pcast(x, axis_name, *, to):
    """jax.lax.pcast: x typed as varying over the axes too (to='varying', JAX's pvary): its
    cotangent is summed over them. JAX's 'reduced' and 'unreduced' targets belong to explicit
    sharding, which spmd lacks (ValueError)."""
    if isinstance(axis_name, (set, frozenset)):
        raise TypeError(f"axis_name={axis_name!r} must be a tuple or a str. Got {axis_name}")
    if not axis_name:
        return x
    if to not in ("varying", "reduced", "unreduced"):
        raise ValueError("Got unexpected `to` value. Allowed `to` values are: "
                         "{'unreduced', 'reduced', 'varying'}")
    return _collective("pcast", lambda v, a: _spmd.pcast(v, a, to), x, axis_name)


def _no_groups(name, groups):
    if groups is not None:
        raise NotImplementedError(f"{name}: axis_index_groups is not supported (JAX deprecates "
                                  "it); shard_map over a mesh axis of the group's size instead")


with_sharding_constraint = _arguments.public("spmd.lax.with_sharding_constraint",
                                             _spmd.with_sharding_constraint)
_stop_gradient = _numpy._op(lambda a: _spmd.stop_gradient(a))


def stop_gradient(x):
    """jax.lax.stop_gradient over a pytree: each array's value, with no derivative (a Python
    scalar is returned as it is, as JAX returns it)."""
    return _tree_map(lambda a: a if type(a) in (bool, int, float, complex) else
                    _stop_gradient(a), x)
rsqrt = _numpy._op(lambda a: _spmd.tnp.rsqrt(a))
logistic = _numpy._op(lambda a: _spmd.tnp.logistic(a))
erf = _numpy._op(lambda a: _spmd.tnp.erf(a))
erfc = _numpy._op(lambda a: _spmd.tnp.erfc(a))
_sort_key_val = _numpy._op(lambda keys, values, dimension=-1:
                           _spmd.tnp.sort_key_val(keys, values, dimension))

_numpy._name_ops(globals(), "spmd.lax")
_stop_gradient.public_name = "spmd.lax.stop_gradient"
_sort_key_val.public_name = "spmd.lax.sort_key_val"


def sort_key_val(keys, values, dimension=-1, is_stable=True):
    """jax.lax.sort_key_val: (keys sorted, values in the keys' order) along `dimension`,
    stably (is_stable=False allows any order of equal keys; this is one)."""
    _same_shapes("sort_key_val", (keys, values))
    return _numpy.sort(keys, axis=dimension), _sort_key_val(keys, values, dimension)


def _same_shapes(name, operands):
    shapes = [tuple(_np.shape(x)) for x in operands]
    if len(set(shapes)) > 1:
        raise TypeError(f"lax.{name}: the operands' shapes {shapes} differ; sort requires "
                        "operands of one shape")


def sort(operand, dimension=-1, is_stable=True, num_keys=1):
    """jax.lax.sort of one array (sorted along `dimension`), or of a sequence of arrays of one
    shape, as a tuple, in the lexicographic order of the first num_keys (the first primary):
    stable, each key compared as jnp.sort compares (-0 equal to 0, NaN after every number)."""
    if not isinstance(operand, (tuple, list)):
        if num_keys != 1:
            raise ValueError(f"num_keys={num_keys!r} must equal 1 for a single operand.")
        return _numpy.sort(operand, axis=dimension)
    if not operand:
        raise TypeError("Sort requires at least one operand")
    if not 1 <= num_keys <= len(operand):
        raise ValueError(f"num_keys={num_keys!r} must be between 1 and "
                         f"len(operand)={len(operand)}")
    _same_shapes("sort", operand)
    if num_keys == 1:
        keys = operand[0]
        return (_numpy.sort(keys, axis=dimension),
                *(_sort_key_val(keys, v, dimension) for v in operand[1:]))
    order = _numpy.lexsort(list(reversed(operand[:num_keys])), axis=dimension)
    return tuple(_numpy.take_along_axis(_numpy.asarray(x), order, axis=dimension)
                 for x in operand)


# Control flow, unrolled while the function is traced: spmd's programs have no loops or branches
# of their own, so scan and fori_loop repeat their body length times in the program, and cond
# computes both branches and selects (values and gradients are JAX's; the program grows with the
# length, and a branch that raises raises whichever is taken).
def scan(f, init, xs=None, length=None, reverse=False, unroll=1, _split_transpose=False):
    """jax.lax.scan, unrolled: carry, y = f(carry, x) for each leading slice x of xs; returns
    the last carry and the ys stacked along a new leading axis."""
    from .tree_util import tree_flatten, tree_unflatten
    leaves, tree = tree_flatten(xs)
    for leaf in leaves:
        if not getattr(leaf, "shape", ()):
            raise ValueError(f"scan got value with no leading axis to scan over: {leaf!r}")
    sizes = {int(leaf.shape[0]) for leaf in leaves}
    if length is None and not leaves:
        raise ValueError("scan got no values to scan over and `length` not provided.")
    n = int(length) if length is not None else sizes.pop()
    if sizes - {n} or (length is not None and leaves and sizes != {n}):
        raise ValueError(f"scan got `length` argument of {length} which disagrees with leading "
                         f"axis sizes {sorted(sizes | {n})}.")
    carry, ys = init, []
    for i in (range(n - 1, -1, -1) if reverse else range(n)):
        x = None if xs is None else tree_unflatten(tree, [_row(leaf, i) for leaf in leaves])
        before = carry
        carry, y = f(carry, x)
        _check_carry(before, carry)
        ys.append(y)
    if reverse:
        ys.reverse()
    return carry, _stacked(ys)


def _vma(x):
    return tuple(_spmd._varying_axes(x)) if isinstance(x, _Tensor) else ()


def _check_carry(before, after):
    """JAX's rule in a shard_map: the carry keeps its varying axes from step to step."""
    from .tree_util import tree_flatten
    if not _spmd._in_shard_map_function():
        return
    for a, b in zip(tree_flatten(before)[0], tree_flatten(after)[0]):
        if _vma(a) != _vma(b):
            grown = tuple(n for n in _vma(b) if n not in _vma(a))
            raise TypeError(
                "scan body function carry input and carry output must have equal types: the "
                f"carry varies over {_vma(a) or 'no axes'} on input and {_vma(b) or 'no axes'} "
                f"on output. Apply jax.lax.pcast(..., {grown}, to='varying') to the initial "
                "carry value.")


def _row(x, i):
    if not isinstance(x, _Tensor):  # a value known now: its row, known now
        import numpy as np
        return _numpy.asarray(np.asarray(x)[i])
    shape = list(x.shape)
    part = _spmd.tnp.slice(x, [i] + [0] * (len(shape) - 1), [i + 1] + shape[1:])
    return _numpy.reshape(part, shape[1:])


def _stacked(ys):
    from .tree_util import tree_flatten, tree_unflatten
    if not ys:
        return None
    flat = [tree_flatten(y)[0] for y in ys]
    tree = tree_flatten(ys[0])[1]
    return tree_unflatten(tree, [_numpy.concatenate([_numpy.expand_dims(_numpy.asarray(leaf), 0)
                                                     for leaf in column]) for column in
                                 zip(*flat)])


def fori_loop(lower, upper, body_fun, init_val, *, unroll=None):
    """jax.lax.fori_loop with Python int bounds, unrolled: body_fun(i, val) for i in range."""
    if not all(isinstance(b, int) for b in (lower, upper)):
        raise TypeError("spmd.lax.fori_loop: the bounds must be Python ints (the loop is "
                        "unrolled while traced)")
    val = init_val
    for i in range(lower, upper):
        val = body_fun(i, val)
    return val


def cond(pred, true_fun, false_fun, *operands):
    """jax.lax.cond: true_fun(*operands) where pred, else false_fun(*operands). A traced pred
    computes both branches and selects each leaf of the result; a Python bool calls one."""
    from .tree_util import tree_flatten, tree_unflatten
    if isinstance(pred, (bool, int)):
        return true_fun(*operands) if pred else false_fun(*operands)
    yes, tree = tree_flatten(true_fun(*operands))
    no, other = tree_flatten(false_fun(*operands))
    if tree != other:
        raise TypeError("true_fun and false_fun output must have identical types, got "
                        f"{tree} and {other}")
    return tree_unflatten(tree, [_numpy.where(pred, a, b) for a, b in zip(yes, no)])


def all_to_all(x, axis_name, split_axis, concat_axis, *, axis_index_groups=None, tiled=False):
    """jax.lax.all_to_all inside a shard_map body: x split along split_axis into one chunk per
    device of the axis; chunk j goes to device j, and each device joins what it receives along
    concat_axis (tiled) or stacks it there as a new axis (not tiled, where split_axis's size is
    the number of devices and that axis goes away). Made of all_gather and a take by
    axis_index: every device receives all blocks (n times the bytes of a direct exchange), and
    it has no derivative (take's)."""
    _no_groups("all_to_all", axis_index_groups)
    from .tree_util import tree_map

    def one(leaf):
        if not (isinstance(leaf, _Tensor) and _spmd._in_shard_map_function()):
            raise NameError(f"unbound axis name: {axis_name} (all_to_all runs inside a "
                            "shard_map or pmap function)")
        n = axis_size(axis_name)
        rank = len(leaf.shape)
        split, concat = split_axis % rank, concat_axis % (rank if tiled else rank)
        size = leaf.shape[split]
        if size % n:
            raise ValueError(f"all_to_all: dimension {split} has size {size}, which the {n} "
                             f"devices along {axis_name} do not divide")
        if not tiled and size != n:
            raise ValueError(f"all_to_all: tiled=False needs dimension {split}'s size ({size}) "
                             f"to equal the axis size {n}")
        chunk = size // n
        gathered = all_gather(leaf, axis_name)  # (n, *shape): device j's block at j
        me = axis_index(axis_name)
        idx = _numpy.arange(chunk) + me * chunk
        mine = _numpy.take(gathered, idx, axis=split + 1)  # (n, ..., chunk, ...)
        if not tiled:
            mine = _numpy.squeeze(mine, axis=split + 1)
            return _numpy.moveaxis(mine, 0, concat)
        moved = _numpy.moveaxis(mine, 0, concat)  # the source index just before concat's dim
        shape = list(moved.shape)
        return _numpy.reshape(moved, shape[:concat] + [shape[concat] * shape[concat + 1]] +
                              shape[concat + 2:])
    return tree_map(one, x)


def switch(index, branches, *operands):
    """jax.lax.switch: branches[index](*operands), index clamped into range. A traced index
    computes every branch and selects each leaf of the result (as cond does)."""
    from .tree_util import tree_flatten, tree_unflatten
    branches = list(branches)
    if not branches:
        raise ValueError("Empty branch sequence")
    if not isinstance(index, _Tensor):
        i = int(_np.asarray(index))
        return branches[builtins.min(builtins.max(i, 0), len(branches) - 1)](*operands)
    index = _numpy.clip(index, 0, len(branches) - 1)
    outs = [tree_flatten(b(*operands)) for b in branches]
    tree = outs[0][1]
    for _, other in outs[1:]:
        if other != tree:
            raise TypeError(f"branch outputs must have identical types, got {tree} and {other}")
    leaves = list(outs[-1][0])
    for k in range(len(branches) - 2, -1, -1):
        leaves = [_numpy.where(index == k, a, b) for a, b in zip(outs[k][0], leaves)]
    return tree_unflatten(tree, leaves)


def while_loop(cond_fun, body_fun, init_val):
    """jax.lax.while_loop where the condition is known while tracing (outside jit, or on
    Python values): body_fun repeated while cond_fun holds. A condition on traced values needs a
    loop in the program, which spmd's programs lack: TypeError saying so."""
    from ._core import Array
    val = _tree_map(lambda v: v if isinstance(v, (_Tensor, Array)) else _numpy.asarray(v),
                    init_val)  # arrays, as JAX's loop carries them (a Python int: int32)
    while True:
        go = cond_fun(val)
        if isinstance(go, _Tensor):
            raise TypeError("spmd.lax.while_loop: the condition depends on traced values, and "
                            "spmd's compiled programs have no loops; use fori_loop or scan with "
                            "a known trip count, or run the loop outside jit")
        if not bool(go):
            return val
        val = body_fun(val)


def axis_size(axis_name):
    """jax.lax.axis_size: the number of devices along the named mesh axes (their product for a
    tuple), inside a shard_map or pmap body."""
    from ._transforms import body_mesh
    mesh = body_mesh()
    names = axis_name if isinstance(axis_name, (tuple, list)) else (axis_name,)
    sizes = {} if mesh is None else dict(zip(mesh.axis_names, mesh.axis_sizes))
    total = 1
    for name in names:
        if name not in sizes:
            raise NameError(f"unbound axis name: {name} (axis_size runs inside a shard_map or "
                            "pmap function)")
        total *= sizes[name]
    return total


def dot_general(lhs, rhs, dimension_numbers, precision=None, preferred_element_type=None,
                out_sharding=None):
    """jax.lax.dot_general: contracting and batch dimensions as ((lhs_contract, rhs_contract),
    (lhs_batch, rhs_batch)); the result's dimensions are the batch ones, then lhs's free ones,
    then rhs's (an einsum of spmd.numpy)."""
    (lc, rc), (lb, rb) = dimension_numbers
    lc, rc, lb, rb = (tuple(int(d) for d in x) for x in (lc, rc, lb, rb))
    if len(lc) != len(rc) or len(lb) != len(rb):
        raise TypeError(f"dot_general requires equal numbers of lhs and rhs contracting and "
                        f"batch dimensions, got {dimension_numbers}")
    letters = iter("abcdefghijklmnopqrstuvwxyz")
    ls = [next(letters) for _ in range(_np.ndim(lhs) if not hasattr(lhs, "shape")
                                       else len(lhs.shape))]
    rs = [next(letters) for _ in range(len(rhs.shape) if hasattr(rhs, "shape")
                                       else _np.ndim(rhs))]
    for i, j in zip(lc + lb, rc + rb):
        rs[j] = ls[i]
    out = [ls[i] for i in lb] + [c for i, c in enumerate(ls) if i not in lc + lb] + \
        [c for j, c in enumerate(rs) if j not in rc + rb]
    result = _numpy.einsum(f"{''.join(ls)},{''.join(rs)}->{''.join(out)}", lhs, rhs)
    return result if preferred_element_type is None else \
        _numpy.astype(result, preferred_element_type)


def _float_unary(name, fn):
    """lax's element-wise function `name` on a floating operand (JAX's TypeError for others)."""
    def unary(x):
        dtype = getattr(x, "dtype", None) or _np.asarray(x).dtype
        if not (_np.dtype(dtype).kind == "f" or str(dtype) == "bfloat16"):
            raise TypeError(f"lax.{name} does not accept dtype {dtype}. Accepted dtypes are "
                            "subtypes of floating.")
        return fn(x)
    unary.__name__ = name
    return unary


exp = _float_unary("exp", _numpy.exp)
log = _float_unary("log", _numpy.log)
sin = _float_unary("sin", _numpy.sin)
cos = _float_unary("cos", _numpy.cos)
tan = _float_unary("tan", _numpy.tan)
cbrt = _float_unary("cbrt", _numpy.cbrt)
tanh = _float_unary("tanh", _numpy.tanh)
sqrt = _float_unary("sqrt", _numpy.sqrt)
log1p = _float_unary("log1p", _numpy.log1p)
expm1 = _float_unary("expm1", _numpy.expm1)
sinh = _float_unary("sinh", _numpy.sinh)
cosh = _float_unary("cosh", _numpy.cosh)
asinh = _float_unary("asinh", _numpy.arcsinh)
acosh = _float_unary("acosh", _numpy.arccosh)
atanh = _float_unary("atanh", _numpy.arctanh)
atan = _float_unary("atan", _numpy.arctan)
asin = _float_unary("asin", _numpy.arcsin)
acos = _float_unary("acos", _numpy.arccos)


def _reduction_axes(operand, axes):
    """lax's reduction axes: distinct dimensions of `operand`, none negative (JAX's errors)."""
    shape, dtype = _numpy.shape(operand), _numpy.result_type(operand)
    axes = tuple(int(a) for a in axes)
    if any(a < 0 or a >= len(shape) for a in axes):
        dims = ",".join(str(d) for d in shape)
        raise ValueError(f"reduction axes {axes} contains out-of-bounds indices for "
                         f"{_np.dtype(dtype).name}[{dims}].")
    if len(set(axes)) != len(axes):
        raise ValueError(f"duplicate value in 'axes' of reduction: {axes}")
    return axes


def _number_reduction(name, reduce):
    """lax.reduce_sum and reduce_prod: a number's reduction in its own dtype (JAX's TypeError for
    bool)."""
    def reduction(operand, axes):
        x = _numpy.asarray(operand)
        axes = _reduction_axes(x, axes)
        if x.dtype == _np.bool_:
            raise TypeError(f"{name} does not accept dtype bool. Accepted dtypes are subtypes "
                            "of number.")
        return reduce(x, axis=axes, dtype=x.dtype)
    reduction.__name__ = name
    return reduction


reduce_sum = _number_reduction("reduce_sum", _numpy.sum)
reduce_prod = _number_reduction("reduce_prod", _numpy.prod)


def _extreme_reduction(name, reduce, lowest):
    """lax.reduce_max and reduce_min: over `axes` (none: the operand itself); over an empty axis
    the reduction's identity, as XLA's (the dtype's lowest value for max: -inf, its minimum,
    False; its highest for min), where jax.numpy's max refuses."""
    def reduction(operand, axes):
        x = _numpy.asarray(operand)
        axes = _reduction_axes(x, axes)
        if not axes:
            return x
        shape = _numpy.shape(x)
        if any(shape[a] == 0 for a in axes):
            fill = _identity("max" if lowest else "min", x.dtype)
            kept = tuple(n for i, n in enumerate(shape) if i not in axes)
            return _numpy.full(kept, fill, dtype=x.dtype)
        return reduce(x, axis=axes)
    reduction.__name__ = name
    return reduction


reduce_max = _extreme_reduction("reduce_max", _numpy.max, lowest=True)
reduce_min = _extreme_reduction("reduce_min", _numpy.min, lowest=False)


def _bitwise_reduction(name, combine, all_ones):
    """lax.reduce_and, reduce_or and reduce_xor over bool or integer operands: the reduced axes
    moved last and flattened, then halved by `combine` until one element is left (exact in any
    order: the operations are associative and commutative); an empty axis gives the identity,
    every bit set (`all_ones`: True, -1, the unsigned maximum) or none."""
    def reduction(operand, axes):
        x = _numpy.asarray(operand)
        axes = _reduction_axes(x, axes)
        kind = _np.dtype(x.dtype).kind
        if kind not in "biu":
            raise TypeError("logical reduction requires operand dtype bool or int, got "
                            f"{_np.dtype(x.dtype).name}.")
        if not axes:
            return x
        shape = _numpy.shape(x)
        kept = [d for d in range(len(shape)) if d not in axes]
        x = _numpy.transpose(x, kept + list(axes))
        n = int(_np.prod([shape[a] for a in axes]))
        x = _numpy.reshape(x, tuple(shape[d] for d in kept) + (n,))
        if n == 0:
            fill = _identity("bitwise_and" if all_ones else "bitwise_or", x.dtype)
            return _numpy.full(tuple(shape[d] for d in kept), fill, dtype=x.dtype)
        while n > 1:
            half = n // 2
            folded = combine(x[..., :half], x[..., half:2 * half])
            x = _numpy.concatenate([folded, x[..., 2 * half:]], axis=-1) if n % 2 else folded
            n = half + n % 2
        return _numpy.reshape(x, tuple(shape[d] for d in kept))
    reduction.__name__ = name
    return reduction


reduce_and = _bitwise_reduction("reduce_and", _numpy.bitwise_and, all_ones=True)
reduce_or = _bitwise_reduction("reduce_or", _numpy.bitwise_or, all_ones=False)
reduce_xor = _bitwise_reduction("reduce_xor", _numpy.bitwise_xor, all_ones=False)


from ._conv import *  # noqa: E402,F401,F403 - conv_general_dilated and its forms
from ._lax_elementwise import *  # noqa: E402,F401,F403 - add, select, clamp and the rest
from ._lax_shapes import *  # noqa: E402,F401,F403 - reshape, dynamic_slice, pad and the rest
from ._lax_combinators import *  # noqa: E402,F401,F403 - reduce, cummax, top_k, dot, map
from ._lax_combinators import _identity  # noqa: E402 - the empty reductions' fill
from ._lax_scatter import *  # noqa: E402,F401,F403 - gather, scatter and their dimension numbers
from ._lax_special import digamma, erf_inv, lgamma  # noqa: E402,F401 - XLA's compositions
from ._lax_windows import (associative_scan, padtype_to_pads,  # noqa: E402,F401
                           reduce_window)


_triangular_solve = _numpy._op(
    lambda a, b, left_side=False, lower=False, transpose_a=False, unit_diagonal=False:
    _spmd.tnp.triangular_solve(a, b, left_side, lower, transpose_a, unit_diagonal))
_triangular_solve.public_name = "spmd.lax.linalg.triangular_solve"


def _solve_triangular(a, b, left_side=False, lower=False, transpose_a=False, conjugate_a=False,
                      unit_diagonal=False):
    """jax.lax.linalg.triangular_solve: x with op(a) x = b (left_side) or x op(a) = b, op(a) = a
    or aᵀ (transpose_a; conjugate_a changes nothing on real dtypes), from a's lower or upper
    triangle; a (..., k, k), b (..., m, n) with a's batch dimensions. JAX's errors for
    operands of other ranks, batches or sizes."""
    del conjugate_a  # real dtypes only
    sa, sb = _numpy.shape(a), _numpy.shape(b)
    if len(sa) < 2 or len(sb) < 2 or len(sa) != len(sb):
        raise TypeError("All inputs to triangular_solve must have the same number of batch "
                        "dimensions, but got "
                        f"{[builtins.max(len(sa) - 2, 0), builtins.max(len(sb) - 2, 0)]} "
                        "batch dimensions for the inputs.")
    common = sb[-2] if left_side else sb[-1]
    if sa[:-2] != sb[:-2] or sa[-1] != sa[-2] or sa[-1] != common:
        raise ValueError("Incompatible shapes for arguments to triangular_solve: "
                         f"{sa[-2:]} and {sb[-2:]}.")
    return _triangular_solve(a, b, left_side=bool(left_side), lower=bool(lower),
                             transpose_a=bool(transpose_a), unit_diagonal=bool(unit_diagonal))


class _LaxLinalg:
    """jax.lax.linalg, as much as spmd has: triangular_solve, cholesky, qr."""
    triangular_solve = staticmethod(_solve_triangular)

    @staticmethod
    def cholesky(x, *, symmetrize_input=True):
        from . import _linalg
        return _linalg.cholesky(x, symmetrize_input=symmetrize_input)

    @staticmethod
    def qr(x, *, full_matrices=True):
        from . import _linalg
        if full_matrices and _numpy.shape(x)[-2] != _numpy.shape(x)[-1]:
            raise NotImplementedError("spmd.lax.linalg.qr: full_matrices=True of a non-square "
                                      "matrix; spmd has the reduced factorization")
        return tuple(_linalg.qr(x))


linalg = _LaxLinalg()
