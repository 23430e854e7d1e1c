"""jax.vjp over pytrees, jax.jvp, jax.linearize and jax.linear_transpose on spmd's reverse mode.

spmd differentiates in reverse only (src/jit/autodiff.cc). A Jacobian-vector product is then
the transpose of a vector-Jacobian product, which is linear in its cotangent u:
    u -> J^T u  is  vjp(f, x)(u),    and    J t  is  vjp(u -> J^T u)(t),
both reverse mode on the trace (the "double vjp"). Compiled, the program keeps the primal pass
and the backward pass's own backward pass: about three forward passes of work, where JAX's
forward mode costs about two. Values agree with JAX's forward mode to rounding (the products
are summed in the reverse pass's order).

Integer and boolean primals are constants here (JAX gives them float0 tangents, which spmd does
not have): their tangents must have their shape, and are not read. The tangents of integer and
boolean outputs are zeros of the output's dtype (JAX's float0 zeros)."""
import weakref

import numpy as np

from . import _arguments, _spmd
from . import numpy as snp
from ._core import Tensor, _bytes, _host, has_traced
from .tree_util import tree_flatten, tree_unflatten


def lift(x):
    """x as a traced value: a Tensor as it is, host data (an Array, NumPy, a Python number) as a
    constant of the program in JAX's canonical dtype."""
    if isinstance(x, Tensor):
        return x
    return _spmd.tnp.constant(*_bytes(_host(np.asarray(x))))


def floating(x):
    """Whether x (anything with a dtype) is of a floating dtype, bfloat16 and float8 included."""
    return np.dtype(x.dtype).name.startswith(("float", "bfloat"))


def argument_cotangents(primals, found):
    """One cotangent per primal pytree for a custom rule to return: None for a primal with no
    floating traced leaf (it gets none, as an integer argument), else the primal's structure
    with found(i, j) at its floating traced leaf j (primal i) and zeros of the leaf's dtype at
    the others."""
    cts = []
    for i, primal in enumerate(primals):
        leaves, tree = tree_flatten(primal)
        live = [isinstance(x, Tensor) and floating(x) for x in leaves]
        cts.append(tree_unflatten(tree, [found(i, j) if is_live else snp.zeros_like(x)
                                         for j, (x, is_live) in enumerate(zip(leaves, live))])
                   if any(live) else None)
    return tuple(cts)


def weighted_sum(pairs):
    """sum over (a, b) of sum(a * b), a scalar of the widest dtype; None for no pairs."""
    total = None
    for a, b in pairs:
        term = snp.sum(a * b)
        total = term if total is None else total + term
    return total


def pullback_of(out_leaves, wrt):
    """The vector-Jacobian product of traced `out_leaves` with respect to traced `wrt`, as a
    function of one cotangent per output leaf (None or a non-floating output: no cotangent).
    Non-floating `wrt` leaves get zeros of their own dtype."""
    live = [i for i, x in enumerate(wrt) if floating(x)]

    def pullback(cts):
        pairs = [(o, c) for o, c in zip(out_leaves, cts) if c is not None and floating(o)]
        grads = [snp.zeros_like(x) for x in wrt]
        if not pairs or not live:
            return grads
        picked = [wrt[i] for i in live]
        if len(pairs) == 1 and pairs[0][0].shape == tuple(pairs[0][1].shape):
            found = _spmd.vjp_with(pairs[0][0], picked, lift(pairs[0][1]))
        else:
            found = _spmd.vjp_of(weighted_sum(pairs), picked)
        for i, g in zip(live, found):
            grads[i] = g
        return grads
    return pullback


def own_copies(leaves):
    """Each leaf as a traced value of its own, which differentiation tells apart from every
    other (an argument given twice is differentiated per position, as in JAX)."""
    return [_spmd.copy_traced(lift(x)) for x in leaves]


def tangents_of(fun, primal_leaves, in_tree, tangent_leaves, has_aux):
    """(outputs, their tangents, aux) of fun at the primals, traced: the double vjp."""
    xs = own_copies(primal_leaves)
    out = fun(*tree_unflatten(in_tree, xs))
    out, aux = split_aux(out, has_aux)
    out_leaves, out_tree = tree_flatten(out)
    out_leaves = [lift(o) for o in out_leaves]
    us = [_spmd.copy_traced(snp.zeros_like(o)) if floating(o) else None for o in out_leaves]
    transposed = pullback_of(out_leaves, xs)(us)
    total = weighted_sum((g, lift(t)) for g, t, x in zip(transposed, tangent_leaves, xs)
                          if floating(x))
    live = [u for u in us if u is not None]
    found = iter(_spmd.vjp_of(total, live) if total is not None and live else
                 [snp.zeros_like(u) for u in live])
    touts = [next(found) if u is not None else snp.zeros_like(o) for o, u in zip(out_leaves, us)]
    return tree_unflatten(out_tree, out_leaves), tree_unflatten(out_tree, touts), aux


def split_aux(out, has_aux):
    """(output, aux) of a function's result: the pair it returns with has_aux, else (out, None);
    JAX's TypeError for has_aux and anything but a pair."""
    if not has_aux:
        return out, None
    if not isinstance(out, (tuple, list)) or len(out) != 2:
        raise TypeError("expected function with aux output to return a two-element tuple, but "
                        f"got type {type(out)} with value {out!r}")
    return out[0], out[1]


def _check_jvp_arguments(primals, tangents):
    """JAX's errors for jvp's primals and tangents: tuples or lists of one structure, each
    tangent of its primal's shape and (for a floating primal) dtype."""
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError("primal and tangent arguments to jax.jvp must be tuples or lists; found "
                        f"{type(primals).__name__} and {type(tangents).__name__}.")
    p_leaves, p_tree = tree_flatten(tuple(primals))
    t_leaves, t_tree = tree_flatten(tuple(tangents))
    if p_tree != t_tree:
        raise TypeError("primal and tangent arguments to jax.jvp must have the same tree "
                        f"structure; primals have tree structure {p_tree} whereas tangents have "
                        f"tree structure {t_tree}.")
    for p, t in zip(p_leaves, t_leaves):
        p_shape, t_shape = np.shape(p), np.shape(t)
        p_dtype, t_dtype = _dtype_of(p), _dtype_of(t)
        if p_dtype.name.startswith(("float", "bfloat")) and p_dtype != t_dtype:
            raise TypeError("primal and tangent arguments to jax.jvp do not match; dtypes must "
                            f"be equal. Got primal dtype {p_dtype} and so expected tangent dtype "
                            f"{p_dtype}, but got tangent dtype {t_dtype} instead.")
        if tuple(p_shape) != tuple(t_shape):
            raise ValueError("jvp called with different primal and tangent shapes;Got primal "
                             f"shape {tuple(p_shape)} and tangent shape as {tuple(t_shape)}")
    return p_leaves, p_tree, t_leaves


def _dtype_of(x):
    """x's dtype as spmd would hold it (a Python number or NumPy value canonical, as JAX's)."""
    if isinstance(x, Tensor) or hasattr(x, "sharding"):
        return np.dtype(x.dtype)
    return _host(np.asarray(x)).dtype


# Per function: jvp's compiled program, traced once per signature. Weak keys, and the program
# reaches the function through a weak reference: a function the caller drops frees it. Cleared
# at exit (spmd.clear_caches): a function in a reference cycle (a custom_jvp rule calling its
# function, JAX's idiom) is freed only by the collector, after the extension checks for leaks.
_EAGER = weakref.WeakKeyDictionary()


def clear_caches():
    """Drops jvp's programs kept for functions called with arrays."""
    _EAGER.clear()


def _compiled_jvp(fun, has_aux):
    from ._jit import eager_program
    programs = _EAGER.setdefault(fun, {})
    if has_aux not in programs:
        ref = weakref.ref(fun)

        def program(primals, tangents):
            p_leaves, p_tree = tree_flatten(primals)
            return tangents_of(ref(), p_leaves, p_tree, tree_flatten(tangents)[0], has_aux)
        program.__name__ = f"jvp({getattr(fun, '__name__', 'fn')})"
        programs[has_aux] = eager_program(program)
    return programs[has_aux]


def jvp(fun, primals, tangents, has_aux=False):
    """jax.jvp: (fun(*primals), J·tangents), or with has_aux (out, tangent_out, aux). Inside a
    traced function it extends the trace; called with arrays, it runs compiled."""
    _arguments.check_callable(fun)
    p_leaves, p_tree, t_leaves = _check_jvp_arguments(primals, tangents)
    if has_traced(primals) or has_traced(tangents):
        out, tout, aux = tangents_of(fun, p_leaves, p_tree, t_leaves, has_aux)
    else:
        out, tout, aux = _compiled_jvp(fun, has_aux)(tuple(primals), tuple(tangents))
    return (out, tout, aux) if has_aux else (out, tout)


def linearize(fun, *primals, has_aux=False):
    """jax.linearize: (fun(*primals), f_jvp) with f_jvp(*tangents) the tangent output, or with
    has_aux (out, f_jvp, aux). f_jvp recomputes from the primals (spmd keeps no linearized
    program between calls), so it costs a jvp each call."""
    _arguments.check_callable(fun)
    zeros = tuple(_zeros_like_tree(p) for p in primals)
    result = jvp(fun, primals, zeros, has_aux=has_aux)

    def f_jvp(*tangents):
        return jvp(fun, primals, tangents, has_aux=has_aux)[1]
    return (result[0], f_jvp, result[2]) if has_aux else (result[0], f_jvp)


def _zeros_like_tree(tree):
    leaves, treedef = tree_flatten(tree)
    return tree_unflatten(treedef, [
        snp.zeros_like(x) if isinstance(x, Tensor) else np.zeros_like(_host(np.asarray(x)))
        for x in leaves])


def linear_transpose(fun, *primals, reduce_axes=()):
    """jax.linear_transpose: the transpose of the linear function `fun` at inputs shaped like
    `primals` (arrays, or anything with .shape and .dtype such as jax.ShapeDtypeStruct; their
    values are not read): transpose_fn(ct) returns one cotangent per primal, as a tuple. fun
    must map floating values to floating values (JAX's TypeError otherwise; spmd has no integer
    transposes)."""
    _arguments.check_callable(fun)
    if reduce_axes:
        raise NotImplementedError("reduce_axes argument to transpose is deprecated")
    leaves, in_tree = tree_flatten(primals)
    specs = [(tuple(np.shape(x)), np.dtype(x.dtype) if hasattr(x, "dtype") else _dtype_of(x))
             for x in leaves]
    from ._jit import eager_program

    def transposed(ct):
        xs = own_copies([snp.zeros(shape, dtype) for shape, dtype in specs])
        out_leaves, out_tree = tree_flatten(fun(*tree_unflatten(in_tree, xs)))
        out_leaves = [lift(o) for o in out_leaves]
        if not all(floating(v) for v in xs + out_leaves):
            raise TypeError("linear_transpose only supports [float or complex] -> [float or "
                            "complex], and integer -> integer functions, but got "
                            f"{[str(x.dtype) for x in xs]} -> "
                            f"{[str(o.dtype) for o in out_leaves]}.")
        ct_leaves, ct_tree = tree_flatten(ct)
        if ct_tree != out_tree:
            raise TypeError("cotangent tree does not match function output, expected "
                            f"{out_tree} but got {ct_tree}")
        for o, c in zip(out_leaves, ct_leaves):
            if tuple(o.shape) != tuple(np.shape(c)) or o.dtype != _dtype_of(c):
                raise TypeError("cotangent type does not match function output, expected "
                                f"{o.dtype}{list(o.shape)} but got {_dtype_of(c)}"
                                f"{list(np.shape(c))}")
        return tree_unflatten(in_tree, pullback_of(out_leaves, xs)(ct_leaves))
    transposed.__name__ = f"transpose({getattr(fun, '__name__', 'fn')})"
    return eager_program(transposed)
