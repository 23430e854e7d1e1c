// float32 sums of contiguous rows in the order JAX 0.10.2's CPU program sums them, so that
// jnp.sum and jnp.mean over a float32 array's last axis (and of a vector) are JAX's bits.
//
// XLA hands a reduction whose input holds 4,096 elements or more to YNNPACK
// (IsInstructionPreferredByYnn), which sums each row as ynn_row_sum does (ynn_reduce.h). Below
// that, its own loop: a row of at most 31 elements added in order from +0; a longer one cut by
// its TreeReductionRewriter into windows of 32, the row padded with zeros to a multiple of 32
// (half the padding, rounded down, before it), each window added in order from +0, and the
// windows' sums then the same way; a row of one element is that element. Read from
// jax.jit(jnp.sum)'s values: equal for vectors of 1 to 32,768 elements and rows of (3, n),
// (8, 1,000), (100, 100), (2, 4,096) (tests/python/jax_parity/test_numpy.py).
//
// spmd takes this order for rows of up to kXlaSumRowLimit elements: one row's sum is then one
// thread's sequence of adds. A longer row keeps reduce.h's blocks combined pairwise, which the
// team splits: past 32,768 elements ynn_row_sum and JAX part (its compensated third accumulator
// is not yet read right: 40,000 and 100,000 random values each differ in the last place), and a
// long sum in one order would be one core's. Pure; thread-safe. Internal to kernels/.
#pragma once

#include <cstdint>

namespace spmd::kernels {

// Rows longer than this sum in reduce.h's own order.
constexpr int64_t kXlaSumRowLimit = int64_t{1} << 15;

// The inputs from which XLA hands a reduction to YNNPACK.
constexpr int64_t kYnnReduceElements = 4096;

// Whether reduce() sums rows of `extent` elements in XLA's order.
constexpr bool sums_in_xla_order(int64_t extent) { return extent <= kXlaSumRowLimit; }

// The sum of x[0..k) in XLA's order (above), for a reduction whose whole input holds
// `input_elements` elements (which decides between YNNPACK's order and XLA's own). +0 for k = 0.
float xla_row_sum(const float* x, int64_t k, int64_t input_elements);

}  // namespace spmd::kernels
