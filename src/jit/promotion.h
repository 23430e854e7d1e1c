// JAX's dtype rules for spmd::numpy: the type lattice (jnp.promote_types) and weak scalars.
// Open to lib/: JAX's dtype rules, which spmd::numpy's functions apply to their operands.
#pragma once

#include "spmd/dtype.h"
#include "spmd/tensor.h"

namespace spmd::compiler {

// jnp.promote_types over spmd's dtypes (numpy.h states the rules); a dtype the lattice creates
// (not `a` or `b`) is canonical under the x64 switch (config.h).
DType promote(DType a, DType b);
// The dtype a weak scalar takes beside a Tensor of dtype `t`: a Python float makes an integer or
// bool `t` the default float, a Python int makes a bool `t` the default int (config.h).
DType promote_with_scalar(DType t, const Scalar& s);
// The dtype an operation that needs floating point computes in (JAX's to_inexact): `t` when
// floating, float64 for a 64-bit integer under x64 (else float32), float32 for the rest.
DType floating_of(DType t);

}  // namespace spmd::compiler
