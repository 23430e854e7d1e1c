"""spmd.lax: the collectives of a shard_map body (psum, pmean over named mesh axes) and
with_sharding_constraint."""
from . import _spmd

psum = _spmd.psum
pmean = _spmd.pmean
with_sharding_constraint = _spmd.with_sharding_constraint
