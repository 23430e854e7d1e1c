// JAX's dtype rules for spmd::numpy: the type lattice (jnp.promote_types) and weak scalars.
// Open to lib/: JAX's dtype rules, which spmd::numpy's functions apply to their operands.
#pragma once

#include "spmd/dtype.h"
#include "spmd/tensor.h"

namespace spmd::compiler {

// jnp.promote_types over spmd's dtypes (numpy.h states the rules).
DType promote(DType a, DType b);
// The dtype a weak scalar takes beside a Tensor of dtype `t`.
DType promote_with_scalar(DType t, const Scalar& s);
// The dtype an operation that needs floating point computes in: `t` when floating, else float32.
DType floating_of(DType t);

}  // namespace spmd::compiler
