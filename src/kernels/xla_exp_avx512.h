// XLA's float32 exp (xla_math.h: xla_exp), and the logistic built on it, sixteen at a time in
// AVX-512 instructions: the
// formula of xla_exp_avx2.h step for step, in registers twice as wide, for the processors that
// have them (sum(exp(a), 1) over 4096 x 2048 float32 ran exp-bound at 0.91x JAX's speed with
// the AVX2 loop on an AVX-512 machine, where XLA's own code is 16 wide). Thirty-two values per
// pass, as two independent vectors, for the reason xla_exp_avx2.h gives. Bit for bit the values
// of xla_exp, NaN, infinities and the flush to zero included (XlaExpAvx512.*, every length and
// offset for the tails, which are masked loads and stores). Internal to kernels/.
#pragma once

#include <cstdint>

namespace spmd::kernels {

// y[i] = xla_exp(x[i]) for i < n; false, having done nothing, where the CPU lacks AVX-512
// (F, the foundation, is all this uses).
bool xla_exp_avx512(const float* x, float* y, int64_t n);

// y[i] = xla_logistic(x[i]) (1 / (1 + exp(-x)), flushed below the smallest normal) for i < n,
// on the same exp; false, having done nothing, where the CPU lacks AVX-512 F. The compiler's
// vector loop of the scalar formula ran 1.35x JAX's time.
bool xla_logistic_avx512(const float* x, float* y, int64_t n);

}  // namespace spmd::kernels
