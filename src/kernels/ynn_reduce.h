// Row reductions in YNNPACK's order, and the two programs jax.random runs through them, so that
// dirichlet and ball of 4,096 values or more give JAX 0.10.2's bits on CPU (ynn_math.h says
// when XLA hands a reduction to YNNPACK).
//
// ynn_row_sum is YNNPACK's float32 sum of one contiguous row as XLA asks for it (consistent
// arithmetic): sixteen lanes; each group of 64 elements (the last padded with zeros) summed
// lane-wise in four steps of sixteen into a local vector, added to a first accumulator; that one
// added into a second after every group of 64 (after every four, while 256 or more are left);
// the second added into a third by Kahan's compensated sum each time 256 groups' worth of clock
// has passed, and once more at the end; the third's sixteen lanes then halved pairwise (lane l +
// lane l + 8, then + 4, + 2, + 1). Checked against jax.jit(lambda a: jnp.sum(jnp.exp(a), 1))
// (a "__ynn_fusion") on rows of 4, 100, 1,000, 2,048 and 5,000 elements: no sum differs.
// Internal to kernels/.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/elementwise.h"
#include "spmd/dtype.h"

namespace spmd::kernels {

// YNNPACK's sum of x[0..k) (above), +0 for k = 0: in vector registers where the CPU has AVX2 or
// AVX-512 (ynn_simd.h), else ynn_row_sum_portable.
float ynn_row_sum(const float* x, int64_t k);

// The same sum in portable C++, lane by lane: the reference the vector loops are tested against.
float ynn_row_sum_portable(const float* x, int64_t k);

// ynn_row_sum of each of `rows` contiguous rows of k elements (x row-major, out one sum a row),
// the same bits, many rows a pass, for k of 1 to kYnnShortRow; false, nothing written, for
// another k. Such a row lies in lanes 0 … k−1 of the accumulators, each element plus +0 (a −0
// becomes +0, a signaling NaN quiet), their further additions of +0 change nothing else, and the
// sum is the lanes' halving tree. A loop over rows, unrolled for one k, runs in vector registers
// across rows, where a call per row spent most of its time on the call: a float32 sum over the
// last axis of (1024, 1024, 4) took 4.7 ms against JAX's 1.9; now 0.6. GCC vectorises such loops
// for k of 1 to 4, 8 and 16 only; rows of 5 to 7 and 9 to 15 are copied a block at a time into
// rows of 8 or 16 padded with +0 (the same halving tree) and summed by those loops: (524288, 5)
// 2.4 -> 0.55 ms (JAX 0.7-1.1). Runs on the calling thread.
bool ynn_short_row_sums(const float* x, int64_t rows, int64_t k, float* out);
// The longest row ynn_short_row_sums takes: it takes every k from 1 to this.
constexpr int64_t kYnnShortRow = 16;

// *sum = ynn_row_sum of the float32 values of the k float16 or bfloat16 elements (`dtype`) at x,
// widened in vector registers (ynn_simd.h: half_row_sum; the bits of widening the row first).
// False, writing nothing, for another dtype or where the CPU has no vector loops (the caller
// widens the row itself).
bool ynn_half_row_sum(DType dtype, const std::byte* x, int64_t k, float* sum);

// Whether YNNPACK's fusion computes float32 `op` with a formula of its own that spmd has
// (ynn_math.h): exp, log, expm1, log1p, tanh and logistic (1 / (exp(-x) + 1) with its exp). XLA
// hands YNNPACK the element-wise work feeding a reduction of 4,096 elements or more, so such a
// chain computes these as YNNPACK does (chain.h, ynn_fusion.h). Not erf (YNNPACK's own, not
// found yet): a chain's erf stays XLA's and differs from JAX's in the last bits.
bool ynn_has_own(Unary op);

// out[i] = YNNPACK's `op` (for which ynn_has_own holds; else InvalidArgument) of a[i] over n
// float32 elements: elementwise.h's UnaryKernel, for a chain's step. `dtype` must be float32.
void ynn_unary(Unary op, DType dtype, Input a, std::byte* out, int64_t n);

// jax.random.dirichlet's normalisation of `rows` rows of k log-space gamma samples `x`, as JAX's
// CPU program runs it from 4,096 values: each row's maximum (YNNPACK's: NaN's sign decides,
// +NaN above every number and -NaN below), u = ynn_exp(x - max), s = ynn_row_sum(u), and out =
// u · (1 / s) (XLA's divide of one, then its product).
void ynn_softmax_rows(const float* x, int64_t rows, int64_t k, float* out);

// jax.random.ball's sums from 4,096 values: out[i] = ynn_row_sum(powf(|g[i, :]|, p)) over `rows`
// rows of k values (YNNPACK's power is the C library's powf).
void ynn_power_sum_rows(const float* g, int64_t rows, int64_t k, float p, float* out);

}  // namespace spmd::kernels
