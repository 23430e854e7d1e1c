"""jax.checkpoint (jax.remat) and jax.checkpoint_policies: rematerialization. A checkpointed
function's backward pass recomputes its forward operations from its inputs instead of keeping
their results from the forward pass, trading compute for memory (a training step holds one
block's activations at a time, not every block's).

Built on the custom_vjp operation (_custom_vjp.py): fwd computes the function and keeps only
its differentiable arguments; bwd, when grad reaches it, traces the function again on them and
takes its vector-Jacobian product there. spmd's compiler merges no repeated computation (it has
no common-subexpression pass), so the recomputation stays, and the executor frees each value
after its last reader (src/jit/execute.cc): the forward activations die in the forward pass.

Policies: JAX's decide, operation by operation, what the forward pass may keep. spmd keeps all
(everything_saveable: the function as it is) or nothing but the inputs (any other policy, and
None): a policy that would save dot products recomputes them here too. Values are the same
either way; only memory and time differ."""
import functools
import inspect

from . import _arguments
from ._custom_vjp import SeveralDtypesError, custom_vjp
from ._forward import argument_cotangents
from .tree_util import tree_flatten


def _saveable(*_, **__):
    return True


def _not_saveable(*_, **__):
    return False


class checkpoint_policies:  # noqa: N801 - jax's name
    """jax.checkpoint_policies: everything_saveable keeps every value (no rematerialization);
    the others, in spmd, keep only the checkpointed function's inputs (see the module's
    docstring)."""

    everything_saveable = staticmethod(_saveable)
    nothing_saveable = staticmethod(_not_saveable)
    dots_saveable = checkpoint_dots = staticmethod(_not_saveable)
    dots_with_no_batch_dims_saveable = staticmethod(_not_saveable)
    checkpoint_dots_with_no_batch_dims = staticmethod(_not_saveable)
    offload_dot_with_no_batch_dims = staticmethod(lambda *a, **k: _not_saveable)

    @staticmethod
    def save_only_these_names(*names):
        return _not_saveable

    @staticmethod
    def save_any_names_but_these(*names):
        return _not_saveable

    save_anything_except_these_names = save_any_names_but_these

    @staticmethod
    def save_and_offload_only_these_names(**kwargs):
        return _not_saveable

    @staticmethod
    def save_from_both_policies(policy_1, policy_2):
        return _saveable if policy_1 is _saveable or policy_2 is _saveable else _not_saveable


def _static_positions(fun, static_argnums, static_argnames):
    nums = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
    names = (static_argnames,) if isinstance(static_argnames, str) else tuple(static_argnames)
    if names:
        try:
            params = list(inspect.signature(fun).parameters)
        except (TypeError, ValueError):
            params = []
        for name in names:
            if name not in params:
                raise ValueError(f"checkpoint: static_argnames {name!r} is not a parameter of "
                                 f"{getattr(fun, '__name__', 'fn')}")
            nums += (params.index(name),)
    return tuple(sorted(set(nums)))


def checkpoint(fun, *, prevent_cse=True, policy=None, static_argnums=(), static_argnames=(),
               concrete=None):
    """jax.checkpoint / jax.remat: `fun`, whose backward pass recomputes its forward operations
    (see the module's docstring). Arguments at static_argnums (or named by static_argnames)
    are passed through as constants, as JAX's; prevent_cse changes nothing (spmd merges no
    repeated operations). The function's outputs must be of one dtype (they travel as one
    value through the custom_vjp operation); with outputs of several, it is called as it is."""
    _arguments.check_callable(fun)
    if concrete is not None:
        raise TypeError("checkpoint: the concrete argument is deprecated in JAX; mark static "
                        "arguments with static_argnums")
    if policy is _saveable:
        return fun
    statics = _static_positions(fun, static_argnums, static_argnames)
    remat = custom_vjp(fun, nondiff_argnums=statics)

    def fwd(*args):
        return fun(*args), tuple(a for i, a in enumerate(args) if i not in statics)

    def bwd(*rest):
        *static_values, primals, g = rest
        return _recomputed_cotangents(fun, statics, static_values, primals, g)
    remat.defvjp(fwd, bwd)

    @functools.wraps(fun)
    def rematerialized(*args, **kwargs):
        if kwargs:  # keyword arguments: bound to their positions
            bound = inspect.signature(fun).bind(*args, **kwargs)
            if bound.kwargs:
                raise NotImplementedError(
                    f"spmd.checkpoint of {getattr(fun, '__name__', 'fn')}: keyword-only "
                    f"arguments ({', '.join(bound.kwargs)}) are not supported; pass them "
                    "positionally")
            args = bound.args
        try:
            return remat(*args)
        except SeveralDtypesError:
            return fun(*args)  # the same values, without rematerialization (see above)
    return rematerialized


def _recomputed_cotangents(fun, statics, static_values, primals, g):
    """The cotangents of the differentiable arguments: fun traced again on them (the
    rematerialized forward pass) and its vector-Jacobian product; None where no leaf is a
    floating Tensor (integer arguments get no cotangent)."""
    from ._jit import vjp

    def on_primals(*diff):
        full, it, statics_it = [], iter(diff), iter(static_values)
        for i in range(len(diff) + len(static_values)):
            full.append(next(statics_it) if i in statics else next(it))
        return fun(*full)
    cts = [tree_flatten(ct)[0] for ct in vjp(on_primals, *primals)[1](g)]
    return argument_cotangents(primals, lambda i, j: cts[i][j])
