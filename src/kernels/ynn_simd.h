// YNNPACK's float32 exp and its kin (ynn_math.h) and row sum (ynn_reduce.h: ynn_row_sum) in vector
// registers, operation for operation: the bits of the scalar formulas, NaN, infinities, signed
// zeros and the thread's flushing of subnormals included (YnnSimd.*, every length around the
// tails, which are masked loads and stores).
//
// YNNPACK's sum keeps sixteen lanes whatever the processor (JAX's sums are the same bits on
// AVX2 and AVX-512 machines): here one AVX-512 register, or two AVX2 registers side by side. Its
// first, second and third accumulators and the Kahan error are four such vectors, and a group of
// 64 elements is four loads added in order. One formula (ynn_simd_body.inc) is compiled for each
// instruction set, so the AVX2 build tested on one machine is the AVX-512 build's arithmetic.
//
// Why: jnp.sum(jnp.exp(a), 1) over 4,096 × 2,048 float32 is one "__ynn_fusion" in JAX's program.
// spmd summed XLA's exps with the scalar formula: 97 of the 4,096 sums had a last bit JAX does
// not have, at 0.78-1.07x JAX's speed. Internal to kernels/.
#pragma once

#include <cstdint>

#include "kernels/elementwise.h"

namespace spmd::kernels {

// One instruction set's loops.
struct YnnLoops {
  const char* isa;  // "avx512f" or "avx2"
  // ynn_row_sum(x, k).
  float (*row_sum)(const float* x, int64_t k);
  // y[i] = YNNPACK's op of x[i] for i < n (ynn_reduce.h: ynn_unary's ops: exp, expm1, tanh,
  // logistic, log and log1p); nothing read or written past n; y may be x. False, writing
  // nothing, for any other op.
  bool (*unary)(Unary op, const float* x, float* y, int64_t n);
  // *sum = ynn_row_sum of YNNPACK's op of x[0..k) (the ops of `unary`), each group of 64 values
  // made and added in registers, never stored (a sum of exps: jnp.sum(jnp.exp(a), 1)); false,
  // writing nothing, for any other op.
  bool (*unary_row_sum)(Unary op, const float* x, int64_t k, float* sum);
  // ynn_row_sum of the float32 values of k float16 (bfloat16 where `bfloat16`) bit patterns at x,
  // widened in registers (exactly: F16C's conversion, or bfloat16's bits shifted up), never
  // stored: jnp.sum of a half array, whose float32 sum XLA's fusion makes from the halves it
  // reads. The bits of widening the row into memory first and summing that (a signaling NaN
  // quieted by the conversion is quieted by the first addition either way).
  float (*half_row_sum)(bool bfloat16, const uint16_t* x, int64_t k);
};

// The widest loops this CPU runs: AVX-512 F, else AVX2 with FMA; nullptr where it has neither.
const YnnLoops* ynn_loops();

// Each instruction set's loops, nullptr where this CPU lacks it (the tests run every one).
const YnnLoops* ynn_loops_avx512();
const YnnLoops* ynn_loops_avx2();

}  // namespace spmd::kernels
