"""spmd.optax: Optax's names (sgd, adam, adamw, apply_updates) over spmd::optim's gradient
transformations (include/spmd/optim.h states their formulas, Optax's). The state is a dict of
the transformation's own layout ({"count", "mu", "nu"} for adam), a pytree that jit, tree_map
and checkpoints carry like any other."""
from . import _jit, _spmd
from ._core import committed_like, has_traced
from .tree_util import tree_flatten, tree_map, tree_unflatten

_o = _spmd.optim


def _keyed(leaves):
    """Leaves as the flat dict spmd::optim takes, keys in leaf order."""
    return {f"{i:08d}": leaf for i, leaf in enumerate(leaves)}


class GradientTransformation:
    """optax.GradientTransformation: init(params) -> state; update(grads, state, params) ->
    (updates, state). Called with Arrays outside jit, each compiles once."""

    def __init__(self, core):
        self._core = core
        self._update = _jit.eager_program(self._traced_update)

    def init(self, params):
        leaves = tree_flatten(params)[0]
        if has_traced(params):
            return self._core.init_traced(_keyed(leaves))
        # As optax's zeros_like: committed as the parameters are.
        state = self._core.init_arrays(_keyed(leaves))
        committed_like(tree_flatten(state)[0], leaves)
        return state

    def _traced_update(self, grads, state, params):
        g_leaves, tree = tree_flatten(grads)
        p_leaves = tree_flatten(params)[0] if params is not None else g_leaves
        updates, state = self._core.update(_keyed(g_leaves), state, _keyed(p_leaves))
        return tree_unflatten(tree, [updates[k] for k in sorted(updates)]), state

    def update(self, updates, state, params=None):
        if has_traced((updates, state, params)):
            return self._traced_update(updates, state, params)
        return self._update(updates, state, params)


def sgd(learning_rate, momentum=None, nesterov=False):
    return GradientTransformation(_o.sgd(learning_rate, momentum or 0.0, nesterov))


def adam(learning_rate, b1=0.9, b2=0.999, eps=1e-8):
    return GradientTransformation(_o.adam(learning_rate, b1, b2, eps))


def adamw(learning_rate, b1=0.9, b2=0.999, eps=1e-8, weight_decay=1e-4):
    return GradientTransformation(_o.adamw(learning_rate, b1, b2, eps, weight_decay))


def apply_updates(params, updates):
    """optax.apply_updates: params + updates, leaf by leaf."""
    return tree_map(lambda p, u: p + u, params, updates)
