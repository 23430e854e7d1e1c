"""jax.custom_jvp: a function whose derivative is the caller's JVP rule instead of its own
operations'. spmd differentiates in reverse, so the rule is transposed: grad's walk reaches the
function's custom_vjp operation (_custom_vjp.py) with a cotangent g, calls the rule with zero
tangents of its own, and takes the reverse derivative of <g, tangent_out> with respect to those
tangents, which is g's product with the rule's (linear) Jacobian. jvp, jacfwd and hessian then
get the rule back by spmd's double vjp (_forward.py). vmap batches the transposed rule as it
batches any custom_vjp rule: traced on one example."""
import functools

from . import _arguments, _spmd
from . import numpy as snp
from ._core import Tensor
from ._custom_vjp import custom_vjp
from ._forward import argument_cotangents, floating, weighted_sum
from .tree_util import tree_flatten, tree_map, tree_unflatten


class NoRuleError(AttributeError, TypeError):
    """A custom_jvp function called before defjvp: JAX's AttributeError, and a TypeError."""


class custom_jvp:  # noqa: N801 - jax's name
    """jax.custom_jvp(fun, nondiff_argnums=()): define the rule with defjvp(jvp), where
    jvp(*nondiff_args, primals, tangents) returns (primal_out, tangent_out) and is linear in
    the tangents, or with defjvps(*per_argument), each f(tangent, primal_out, *primals) or None.

    Called without differentiation it is fun. Under grad, fun gives the value and the rule's
    transpose the derivative; the rule's own primal_out is not used (JAX uses it, and rules
    whose primal_out differs from fun's give other values there). The rule must be linear in
    the tangents, as JAX requires: a rule that is not gives a wrong derivative without a word,
    in JAX's reverse mode as here."""

    def __init__(self, fun, nondiff_argnums=()):
        _arguments.check_callable(fun)
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(int(i) for i in nondiff_argnums)
        self.jvp = None
        self._reverse = None

    def defjvp(self, jvp, symbolic_zeros=False):
        """Sets the rule jvp(*nondiff, primals, tangents) -> (primal_out, tangent_out), and
        returns it (so it can be used as a decorator). symbolic_zeros is JAX's option for rules
        that skip zero tangents; here every tangent is an array."""
        _arguments.check_callable(jvp)
        self.jvp = jvp
        self._reverse = self._transposed()
        return jvp

    def defjvps(self, *jvps):
        """Sets the rule from one function per differentiable argument, each
        f(tangent, primal_out, *primals) -> that argument's part of tangent_out, or None for an
        argument with no derivative; the parts are summed."""
        if self.nondiff_argnums:
            raise TypeError("Can't use ``defjvps`` with ``nondiff_argnums``.")
        fun = self.fun

        def jvp(primals, tangents):
            out = fun(*primals)
            total = None
            for rule, t in zip(jvps, tangents):
                if rule is None:
                    continue
                part = rule(t, out, *primals)
                total = part if total is None else tree_map(lambda a, b: a + b, total, part)
            if total is None:
                total = tree_map(snp.zeros_like, out)
            return out, total
        self.defjvp(jvp)

    def __call__(self, *args):
        if self.jvp is None:
            name = getattr(self.fun, "__name__", "fn")
            raise NoRuleError(f"No JVP defined for custom_jvp function {name} using defjvp.")
        return self._reverse(*args)

    def _transposed(self):
        """The custom_vjp whose bwd is the rule's transpose. Its closures hold the function and
        the rule, not this object: no cycle keeps it (and the programs cached for it) alive."""
        fun, jvp = self.fun, self.jvp
        rev = custom_vjp(fun, nondiff_argnums=self.nondiff_argnums)
        nondiff = set(self.nondiff_argnums)

        def fwd(*args):
            return fun(*args), tuple(a for i, a in enumerate(args) if i not in nondiff)

        def bwd(*rest):
            *nondiff_args, primals, g = rest
            return _transpose(jvp, nondiff_args, primals, g, fun)
        rev.defvjp(fwd, bwd)
        return rev


def _transpose(jvp, nondiff_args, primals, g, fun):
    """The cotangents of `primals` for output cotangent `g`: the reverse derivative of
    <g, tangent_out> with respect to zero tangents, which the rule is linear in."""
    flat = [tree_flatten(p) for p in primals]
    tangents, wrt = [], []
    for leaves, tree in flat:
        ts = [_spmd.copy_traced(snp.zeros_like(x)) if isinstance(x, Tensor) and floating(x)
              else snp.zeros_like(x) for x in leaves]
        wrt.extend(t for t, x in zip(ts, leaves) if isinstance(x, Tensor) and floating(x))
        tangents.append(tree_unflatten(tree, ts))
    result = jvp(*nondiff_args, tuple(primals), tuple(tangents))
    if not isinstance(result, (tuple, list)) or len(result) != 2:
        name = getattr(fun, "__name__", "fn")
        raise TypeError(f"Custom JVP rule {name} must produce a pair (list or tuple of length "
                        f"two) representing primal and tangent outputs, but got {result!r}.")
    pairs = [(t, c) for t, c in zip(tree_flatten(result[1])[0], tree_flatten(g)[0])
             if isinstance(t, Tensor) and floating(t)]
    total = weighted_sum(pairs)
    found = iter(_spmd.vjp_of(total, wrt) if total is not None and wrt else
                 [snp.zeros_like(w) for w in wrt])
    return argument_cotangents(primals, lambda i, j: next(found))
