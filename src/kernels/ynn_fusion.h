// Which steps of an element-wise chain feeding a reduction XLA puts inside the YNNPACK fusion it
// makes of that reduction, so that spmd computes those steps with YNNPACK's formulas
// (ynn_math.h) and the others with XLA's (xla_math.h), as JAX 0.10.2's CPU program does.
//
// XLA's CPU backend hands a float32 sum, max or min of 4,096 elements or more to YNNPACK
// (ynn_support.cc: IsInstructionPreferredByYnn) and grows that fusion upward from the reduction:
// an operand joins when YNNPACK supports its operation and every one of its users has joined
// (ynn_matcher.h: MaterializedInput, LibraryRewriter's growth). An operation YNNPACK lacks (a
// select, a comparison, sin, a round half away from zero, a float16 value) stops the growth: it
// and everything feeding it stay in XLA's loop fusion, with XLA's exp and log.
// jnp.sum(jnp.where(a > 0, jnp.exp(a), 0), 1) takes XLA's exp; jnp.sum(jnp.exp(a) * 2, 1)
// YNNPACK's. Confirmed on JAX's programs (jax.jit(f).lower(a).compile().as_text()): softplus
// (its select) and where(…, exp, …) stay in a "kLoop" fusion, tanh, exp, log1p, expm1, sqrt,
// rsqrt, pow, divide, abs, floor, round half to even and sign go into the "__ynn_fusion".
// Pure functions; thread-safe. Internal to kernels/ (chain.cc).
#pragma once

#include <cstdint>
#include <span>

#include "kernels/chain.h"

namespace spmd::kernels {

// Whether YNNPACK supports `step`'s operation in a fusion (ynn_support.cc's operator maps and
// element types: float64, float32, bfloat16, int8 and uint8 operands and results).
bool ynn_supports(const ChainStep& step);

// Bit k set where step k of `steps`, a chain whose last step feeds a reduction XLA hands to
// YNNPACK, is inside YNNPACK's fusion: the last step where it is supported, an earlier one where
// it is supported and every later step reading its result is inside. At most kMaxChainSteps (64)
// steps.
uint64_t ynn_fused_steps(std::span<const ChainStep> steps);

}  // namespace spmd::kernels
