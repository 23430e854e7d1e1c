// spmd::config — process-wide switches, as jax.config's.
//
// x64 (jax_enable_x64). Off by default, as in JAX. The environment variable JAX_ENABLE_X64 (or
// SPMD_ENABLE_X64, which wins) gives the starting value: 1, true, yes, on, t, y or 0, false, no,
// off, f, n; any other value is InvalidArgument at the first use. set_x64_enabled changes it.
// - Off: a dtype that spmd's rules create is at most 32 bits wide, as JAX canonicalizes it:
//   int32 + uint32 is int32 (the lattice's int64), an integer array with a Python float is
//   float32, a bool array with a Python int is int32, sqrt of int64 is float32, and the Python
//   API takes 64-bit host values and Python numbers as 32-bit arrays. An operand a C++ program
//   made 64-bit keeps its dtype where it is the result's (int64 + int32 is int64); JAX with x64
//   off has no such operands.
// - On: the lattice's dtypes as they are (int64, uint64, float64), Python numbers and the Python
//   constructors' defaults 64-bit, 64-bit host data kept, integer constants exact to the bit.
// A traced program belongs to the value it was traced under (jit's cache is keyed by it). Every
// process of a job must set it alike: their programs differ otherwise, which the collectives
// report as CollectiveMismatch.
#pragma once

#include "spmd/dtype.h"

namespace spmd::config {

bool x64_enabled();
void set_x64_enabled(bool on);

// `t` as a dtype the rules may create: with x64 off, int64 -> int32, uint64 -> uint32,
// float64 -> float32; with it on, `t`.
DType canonical_dtype(DType t);
// jnp.float_ and jnp.int_: float64 and int64 with x64 on, else float32 and int32.
DType default_float_dtype();
DType default_int_dtype();

}  // namespace spmd::config
