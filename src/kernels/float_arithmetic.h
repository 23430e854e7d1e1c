// The four arithmetic operations, the fused multiply-add, the six comparisons, and negation,
// absolute value, relu and sign of float32 and float64, as loops the compiler vectorises in the
// processor's widest vectors.
//
// These are most of the steps of a training step's element-wise work (the optimizer's update,
// a gradient's products, ReLU's comparisons), and most steps of every chain (chain.h). Through
// Eigen 3.4 (elementwise.cc), which this library builds for the baseline x86-64, they ran in
// SSE's four lanes with Eigen's peeling around every call: 110-210 ns for 512 float32s on the
// 2-core Zen 3, a float64 equality 820 ns (no packet form for a bool result), where a block of
// a chain has only a few hundred nanoseconds to keep up with memory; relu and sign were Eigen
// selects, one element at a time (mask_ops.h). Here each is a plain loop,
// built for x86-64-v3 (AVX2: eight float32 lanes) and the baseline, the one the CPU runs chosen
// at load time (`target_clones`). Each element's value is the one IEEE operation on it, so the
// bits are those of the scalar expression on any vector width: nothing is reordered, nor fused
// but where the multiply-add asks for it,
// a quotient is the division instruction's, and a comparison is false against NaN (true for
// "not equal"). Subnormals follow the calling thread's floating-point mode (the instructions
// honour denormals-are-zero as the scalar ones do; float_environment.h).
//
// Operands are elementwise.h's Inputs (n elements, or one for all n). `out` may be an operand's
// own buffer (the same address), or overlap none of them. Pure functions; thread-safe.
// Internal to kernels/ (elementwise.cc).
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/elementwise.h"
#include "spmd/dtype.h"

namespace spmd::kernels {

// out[i] = a[i] op b[i] for op add, sub, mul or div of float32 or float64. False, with nothing
// written, for another op or dtype.
bool float_arithmetic(Binary op, DType dtype, Input a, Input b, std::byte* out, int64_t n);

// out[i] = a[i] × b[i] + c[i] rounded once (std::fma) for float32 or float64, after flipping the
// signs `form` flags (chain.h: MultiplyAddSign: the product's, the addend's). Built for
// x86-64-v3 it is the FMA instruction; the baseline build calls the C library's fma, exact and
// slow (jit asks for none on a CPU without the instruction: cpu_has_fma). Operands are Inputs
// as above. False, with nothing written, for another dtype.
bool float_multiply_add(uint8_t form, DType dtype, Input a, Input b, Input c, std::byte* out,
                        int64_t n);

// Whether this CPU has fused multiply-add instructions (x86's FMA3; every AArch64 CPU).
bool cpu_has_fma();

// out[i] = a[i] op b[i] as bools (bytes 0 or 1) for the comparisons (eq, ne, lt, le, gt, ge) of
// float32 or float64. False, with nothing written, for another op or dtype.
bool float_comparison(Binary op, DType dtype, Input a, Input b, std::byte* out, int64_t n);

// out[i] = op(a[i]) for neg, abs, relu, sign, floor, ceil and round-half-even of float32 or
// float64, as elementwise.h defines them (relu: NaN kept, -0 and a subnormal read as zero to +0;
// sign: ±1, else the zero's sign, NaN kept; the roundings std::floor's, std::ceil's and
// std::nearbyint's, -0 kept). False, with nothing written, for another op or dtype.
bool float_unary(Unary op, DType dtype, Input a, std::byte* out, int64_t n);

}  // namespace spmd::kernels
