"""spmd.lax: the collectives of a shard_map body (psum, pmean over named mesh axes),
with_sharding_constraint, stop_gradient, rsqrt and logistic."""
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

_numpy._name_ops(globals(), "spmd.lax")
_stop_gradient.public_name = "spmd.lax.stop_gradient"
