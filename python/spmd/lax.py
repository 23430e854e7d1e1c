"""spmd.lax: the collectives of a shard_map body (psum, pmean over named mesh axes),
with_sharding_constraint, stop_gradient, rsqrt and logistic."""
from . import _spmd, numpy as _numpy

psum = _spmd.psum
pmean = _spmd.pmean
with_sharding_constraint = _spmd.with_sharding_constraint
stop_gradient = _numpy._op(lambda a: _spmd.stop_gradient(a))
rsqrt = _numpy._op(lambda a: _spmd.tnp.rsqrt(a))
logistic = _numpy._op(lambda a: _spmd.tnp.logistic(a))
