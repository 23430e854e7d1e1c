// Element-wise operations that Eigen 3.4 evaluates one element at a time, made vectorised: a
// select by a bool condition, a bool's conversion to a number, and IEEE 754-2019's maximum and
// minimum of floating-point values.
//
// Eigen 3.4's select has no vectorised form (its evaluator reads one coefficient at a time, a
// branch per element), so jnp.maximum's NaN-keeping expression, a select around Eigen's max,
// ran one element at a time too, and a bool array cast to float is a scalar loop of byte loads.
// In a training step these run in every ReLU and its gradient: `where(a > 0, g, 0)` over
// 256 × 2048 float32 took 1.2 ms on two cores, JAX's 0.26 (issue 51). Here the select and the
// conversion are plain loops the compiler vectorises: the condition is read as bytes and widened
// into a mask of the element's width, and the select moves bits through the mask, with no branch
// and the same bits as the conditional it replaces (a NaN's payload and a zero's sign included).
// The maximum and minimum are Eigen's packet operations (its max instruction, compares and
// blends), the same operations the scalar expression made, so that a subnormal is flushed where
// the thread treats denormals as zero exactly as before (the numerics table checks it against
// JAX: a select of bits would keep it). Where the CPU has AVX2 the same instructions run in its
// eight lanes (Eigen's packets are the baseline's four, chosen when this file is compiled).
//
// Every operand is an Input (elementwise.h) of n elements or of one, repeated. Pure functions;
// thread-safe. Internal to kernels/.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/elementwise.h"
#include "spmd/dtype.h"

namespace spmd::kernels {

// out[i] = cond[i] ? a[i] : b[i] over elements of `size` bytes, whatever they hold (the bits
// are moved, never interpreted); cond holds bools (bytes 0 or 1). False, with nothing written,
// for a size other than 1, 2, 4 or 8.
bool select_bits(size_t size, Input cond, Input a, Input b, std::byte* out, int64_t n);

// out[i] = 0 or 1 as the dtype `to`, from bools. False, with nothing written, for bool itself
// and the half types (their conversion rounds through float32 elsewhere).
bool convert_from_bool(DType to, Input a, std::byte* out, int64_t n);

// jnp.maximum and jnp.minimum of float32 or float64: NaN where either operand is NaN (a's where
// both are), -0 below +0 whichever side each is on, else the larger or smaller value. False,
// with nothing written, for another dtype.
bool ieee_max_min(bool maximum, DType dtype, Input a, Input b, std::byte* out, int64_t n);
// The same in Eigen's four-lane packets, as CPUs without AVX2 run it; the tests compare both.
bool ieee_max_min_portable(bool maximum, DType dtype, Input a, Input b, std::byte* out, int64_t n);

// jnp.maximum and jnp.minimum of float16, on the bits: each value's sign-magnitude bits read as
// a two's-complement key (-0 just below +0), the larger or smaller key taken, and a NaN operand
// (a's where both are) giving float16's one quiet NaN of its sign, in sixteen lanes where the
// CPU has AVX2. The bits of widening both to float32, ieee_max_min and rounding back (as every
// other float16 operation does: elementwise.cc), which ran at 0.5-0.8x JAX's speed over 4096 x
// 2048 (spmd-bench cores) for two conversions and a float32 pass per block of 1,024.
void float16_max_min(bool maximum, Input a, Input b, std::byte* out, int64_t n);
// The same for bfloat16, whose subnormals widen to float32 subnormals: where the calling thread
// reads subnormals as zero (float_environment.h, as jit's threads do), a subnormal operand is
// read, compared and returned as the zero of its sign, as the widened float32 maximum gives;
// elsewhere it is compared as the value it is. The bits of widening, ieee_max_min and rounding
// back, in either mode (MaskOps.BFloat16…).
void bfloat16_max_min(bool maximum, Input a, Input b, std::byte* out, int64_t n);

// jnp.negative (`negate`) or jnp.abs of float16, on the bits: the sign bit flipped or cleared,
// a NaN's payload kept, as JAX's CPU code computes them (widening, the float32 operation and
// rounding back made every NaN float16's one quiet NaN, and took twice JAX's time: 1.56 ms over
// 4096 x 2048 against 0.77). Not bfloat16, whose operations JAX computes in float32 (its NaNs come
// back as one quiet NaN of their sign).
void float16_negate_or_abs(bool negate, Input a, std::byte* out, int64_t n);

}  // namespace spmd::kernels
