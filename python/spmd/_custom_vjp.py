"""jax.custom_vjp: a function whose derivative is the caller's bwd rule instead of its own
operations'. On traced values its fwd runs, and its result passes through one `custom_vjp`
operation (lax::with_vjp in the C++ core) whose rule calls bwd(residuals, cotangent) on the
trace when grad walks back to it; on concrete arrays the function runs as it is, as in JAX."""
import functools

from . import _arguments, _spmd
from ._core import Tensor
from .tree_util import tree_flatten, tree_unflatten


class NoRuleError(AttributeError, TypeError):
    """A custom_vjp function called before defvjp: JAX's AttributeError, and a TypeError (a call
    the function cannot take yet) for code that catches misuse as such."""


class SeveralDtypesError(NotImplementedError):
    """The function's outputs are of several dtypes, which the custom_vjp operation cannot carry
    as its one value."""


class custom_vjp:  # noqa: N801 - jax's name
    """jax.custom_vjp(fun, nondiff_argnums=()): define the rule with defvjp(fwd, bwd), where
    fwd(*args) returns (fun(*args), residuals) and bwd(*nondiff_args, residuals, g) returns one
    cotangent per differentiable argument (a pytree like it, or None for zeros).

    Under vmap, bwd is traced on one example's residuals and cotangent and batched, as JAX
    batches it. Difference from JAX, a clear error: outputs of more than one dtype (they travel
    as one value)."""

    def __init__(self, fun, nondiff_argnums=()):
        _arguments.check_callable(fun)
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(int(i) for i in nondiff_argnums)
        self.fwd = self.bwd = None
        self._in_fwd = False  # fwd calling the function itself (JAX's idiom) gets its value

    def defvjp(self, fwd, bwd, symbolic_zeros=False):
        """Sets the rule: fwd(*args) -> (out, residuals); bwd(*nondiff, residuals, g) -> tuple
        of cotangents, one per differentiable argument. symbolic_zeros is JAX's option for
        rules that skip zero cotangents; here every cotangent is an array."""
        self.fwd, self.bwd = fwd, bwd

    def __call__(self, *args):
        name = getattr(self.fun, "__name__", "fn")
        if self.fwd is None:
            raise NoRuleError(f"No VJP defined for custom_vjp function {name} using defvjp.")
        for i in self.nondiff_argnums:
            if not 0 <= i < len(args):
                raise ValueError(f"custom_vjp {name}: nondiff_argnums {i} is out of range for "
                                 f"{len(args)} arguments")
        diff = [i for i in range(len(args)) if i not in self.nondiff_argnums]
        flat = [tree_flatten(args[i]) for i in diff]
        inputs = [leaf for leaves, _ in flat for leaf in leaves if isinstance(leaf, Tensor)]
        if not inputs or self._in_fwd:  # nothing to differentiate, or fwd's own call of it
            return self.fun(*args)
        self._in_fwd = True
        try:
            out, residuals = self.fwd(*args)
        finally:
            self._in_fwd = False
        out_leaves, out_tree = tree_flatten(out)
        if not out_leaves or not all(isinstance(o, Tensor) for o in out_leaves):
            raise TypeError(f"custom_vjp {name}: fwd must return traced arrays as its output")
        dtypes = {str(o.dtype) for o in out_leaves}
        if len(dtypes) > 1:
            raise SeveralDtypesError(
                f"spmd: custom_vjp {name} returns outputs of several dtypes ({sorted(dtypes)}); "
                "spmd carries them as one value of one dtype")
        shapes = [tuple(o.shape) for o in out_leaves]
        packed = out_leaves[0] if len(out_leaves) == 1 else _spmd.tnp.concatenate(
            [_spmd.tnp.reshape(o, [-1]) for o in out_leaves], 0)
        # The residuals and nondiff arguments' traced leaves travel as operands of the operation
        # (its rule gets them back): a closure holding Tensors would hold their trace, which
        # holds the operation, which holds the closure, a cycle no collector sees.
        nondiff = [args[i] for i in self.nondiff_argnums]
        nondiff_leaves, nondiff_tree = tree_flatten(nondiff)
        res_leaves, res_tree = tree_flatten(residuals)
        held = nondiff_leaves + res_leaves
        traced_at = [k for k, leaf in enumerate(held) if isinstance(leaf, Tensor)]
        extra = [held[k] for k in traced_at]
        constants = [None if isinstance(leaf, Tensor) else leaf for leaf in held]
        split = len(nondiff_leaves)
        arg_trees = [(tree, [_type_of(leaf) if isinstance(leaf, Tensor) else None
                             for leaf in leaves]) for leaves, tree in flat]
        count, unheld = len(inputs), [None] * len(extra)
        del flat, held, nondiff, nondiff_leaves, res_leaves, residuals, out, out_leaves
        bwd = self.bwd

        def rule(tensors, g):
            values = list(constants)
            for k, t in zip(traced_at, tensors[count:]):
                values[k] = t
            nondiff_args = tree_unflatten(nondiff_tree, values[:split])
            res = tree_unflatten(res_tree, values[split:])
            cts = bwd(*nondiff_args, res, tree_unflatten(out_tree, _unpack(g, shapes)))
            if not isinstance(cts, (tuple, list)) or len(cts) != len(arg_trees):
                raise TypeError(f"custom_vjp {name}: bwd must return a tuple of "
                                f"{len(arg_trees)} cotangents (one per differentiable "
                                f"argument), not {cts!r}")
            result = []
            for (tree, traced), ct in zip(arg_trees, cts):
                ct_leaves = [None] * len(traced) if ct is None else tree_flatten(ct)[0]
                if len(ct_leaves) != len(traced):
                    raise TypeError(f"custom_vjp {name}: a cotangent's structure differs from "
                                    "its argument's")
                result.extend(_checked(name, c, want) for c, want in zip(ct_leaves, traced)
                              if want is not None)
            return result + unheld

        value = _spmd.with_vjp(name, inputs + extra, packed, rule)
        return tree_unflatten(out_tree, _unpack(value, shapes))


def _type_of(x):
    return tuple(x.shape), str(x.dtype)


def _checked(name, ct, want):
    """The cotangent `ct` of an argument of type `want` ((shape, dtype)), else JAX's ValueError
    (a cotangent of another shape would be broadcast or summed into a wrong gradient)."""
    if ct is None:
        return None
    got = _type_of(ct) if isinstance(ct, Tensor) else None
    if got != want:
        shape, dtype = want
        shown = f"{got[1]}{list(got[0])}" if got else repr(ct)
        raise ValueError(f"custom_vjp {name}: the bwd rule must produce an output with the same "
                         f"type as the args tuple of the primal function, but it produced "
                         f"{shown} for an input of type {dtype}{list(shape)}")
    return ct


def _unpack(value, shapes):
    """The outputs of `shapes` from their packed value (itself when there is one)."""
    if len(shapes) == 1:
        return [value]
    parts, at = [], 0
    for shape in shapes:
        size = 1
        for d in shape:
            size *= d
        parts.append(_spmd.tnp.reshape(_spmd.tnp.slice(value, [at], [at + size]), list(shape)))
        at += size
    return parts
