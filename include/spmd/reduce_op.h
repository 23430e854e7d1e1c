// spmd::ReduceOp — how collectives combine values (psum, pmax, …).
#pragma once

#include <string_view>

namespace spmd {

// On bool, sum and max are logical or, prod and min logical and. Integers wrap on overflow
// (two's complement). Floating-point min and max return NaN when either operand is NaN, as
// jnp.minimum and jnp.maximum do. float16 and bfloat16 are combined in float32 and rounded to
// nearest even once at the end.
enum class ReduceOp { kSum, kProd, kMin, kMax };

constexpr std::string_view reduce_op_name(ReduceOp op) {
  constexpr std::string_view names[] = {"sum", "prod", "min", "max"};
  return names[static_cast<int>(op)];
}

}  // namespace spmd
