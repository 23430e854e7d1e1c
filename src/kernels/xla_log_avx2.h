// XLA's float32 log and log1p (xla_math.h: xla_log_of, xla_log1p_of) eight at a time in AVX2 and
// FMA instructions, written out as xla_exp_avx2.h's exp is: GCC's vector loop of the scalar
// formulas (elementwise.cc, built for x86-64-v3) ran 1.34-1.50x (log) and 1.57-1.65x (log1p)
// JAX's time on a Zen 3 (session 44), its selects and NaN-keeping clamps made into compares and
// blends. Bit for bit the scalar functions' values, NaN, infinities, zeros and subnormals (read
// as zero) included (XlaLogAvx2.*, every length and offset for the tails). Internal to kernels/.
#pragma once

#include <cstdint>

namespace spmd::kernels {

// y[i] = xla_log_of(x[i]) for i < n; false, having done nothing, where the CPU lacks AVX2 or FMA.
bool xla_log_avx2(const float* x, float* y, int64_t n);

// y[i] = xla_log1p_of(x[i]) for i < n; false, having done nothing, where the CPU lacks AVX2 or
// FMA. Where every value of the call is on one side of sqrt(2) - 1 in magnitude (the chains call
// it on blocks of up to 2048), only that side's form is computed (session 46: twice as fast there).
bool xla_log1p_avx2(const float* x, float* y, int64_t n);

}  // namespace spmd::kernels
