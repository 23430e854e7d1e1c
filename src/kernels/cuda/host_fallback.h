// The seam's methods the GPU has no kernel for yet (JAX's samplers, gamma, poisson, YNNPACK's
// row programs, cholesky, qr, triangular_solve, scatter with a combiner), computed by the CPU
// backend on host copies of their operands and copied back to the GPU: JAX's values bit for bit, as
// on CPU devices, for the cost of the copies and a wait on the GPU's stream (device_memory.h).
// Pointers are into `gpu`'s memory, as the seam's are.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/cuda/gpu_context.h"
#include "kernels/linalg.h"
#include "kernels/random_samplers.h"
#include "kernels/scatter.h"

namespace spmd::kernels::cuda {

void random_sample_on_host(GpuContext& gpu, const Sampler& sampler, const RandomBlock& block,
                           std::byte* out);
void random_gamma_on_host(GpuContext& gpu, const uint32_t* key, const float* alpha, int64_t n,
                          GammaForm form, float* out);
void ynn_softmax_rows_on_host(GpuContext& gpu, const float* x, int64_t rows, int64_t k, float* out);
void ynn_power_sum_rows_on_host(GpuContext& gpu, const float* g, int64_t rows, int64_t k,
                                const float* p, float* out);
void random_poisson_on_host(GpuContext& gpu, const uint32_t* key, const float* lam, int64_t n,
                            int32_t* out);
void cholesky_on_host(GpuContext& gpu, DType dtype, const std::byte* in, int64_t batch, int64_t n,
                      std::byte* out);
void triangular_solve_on_host(GpuContext& gpu, DType dtype, const std::byte* a, const std::byte* b,
                              int64_t batch, int64_t m, int64_t n, TriangularSolve how,
                              std::byte* out);
void qr_on_host(GpuContext& gpu, DType dtype, const std::byte* in, int64_t batch, int64_t m,
                int64_t n, std::byte* q, std::byte* r);

// `out` holds the operand on entry, as scatter.h's.
void scatter_on_host(GpuContext& gpu, ScatterCombine how, DType dtype, const std::byte* updates,
                     const Shape& shape, int axis, const int32_t* indices, int64_t count,
                     std::byte* out);

}  // namespace spmd::kernels::cuda
