#include "kernels/cuda/host_fallback.h"

#include <algorithm>
#include <vector>

#include "kernels/backend.h"
#include "kernels/cuda/device_memory.h"

namespace spmd::kernels::cuda {
namespace {

using HostBytes = std::vector<std::byte>;

// `bytes` of `gpu`'s memory at `device`, once the work queued before has written them.
HostBytes fetch(GpuContext& gpu, const void* device, size_t bytes) {
  HostBytes host(std::max<size_t>(bytes, 1));
  copy_memory(static_cast<const std::byte*>(device), MemorySpace::device(gpu.ordinal()),
              host.data(), MemorySpace::host(), bytes);
  return host;
}

void put(GpuContext& gpu, const HostBytes& host, void* device, size_t bytes) {
  copy_memory(host.data(), MemorySpace::host(), static_cast<std::byte*>(device),
              MemorySpace::device(gpu.ordinal()), bytes);
}

size_t elements(const Shape& shape) { return static_cast<size_t>(shape_size(shape)); }

}  // namespace

void random_sample_on_host(GpuContext& gpu, const Sampler& sampler, const RandomBlock& block,
                           std::byte* out) {
  const size_t bytes = elements(block.extent) * dtype_size(sampler.dtype);
  HostBytes host(std::max<size_t>(bytes, 1));
  cpu_backend().random_sample(sampler, block, host.data());
  put(gpu, host, out, bytes);
}

void random_gamma_on_host(GpuContext& gpu, const uint32_t* key, const float* alpha, int64_t n,
                          GammaForm form, float* out) {
  const size_t bytes = static_cast<size_t>(n) * sizeof(float);
  const HostBytes k = fetch(gpu, key, 2 * sizeof(uint32_t));
  const HostBytes a = fetch(gpu, alpha, bytes);
  HostBytes host(std::max<size_t>(bytes, 1));
  cpu_backend().random_gamma(reinterpret_cast<const uint32_t*>(k.data()),
                             reinterpret_cast<const float*>(a.data()), n, form,
                             reinterpret_cast<float*>(host.data()));
  put(gpu, host, out, bytes);
}

void ynn_softmax_rows_on_host(GpuContext& gpu, const float* x, int64_t rows, int64_t k,
                              float* out) {
  const size_t bytes = static_cast<size_t>(rows * k) * sizeof(float);
  const HostBytes in = fetch(gpu, x, bytes);
  HostBytes host(std::max<size_t>(bytes, 1));
  cpu_backend().ynn_softmax_rows(reinterpret_cast<const float*>(in.data()), rows, k,
                                 reinterpret_cast<float*>(host.data()));
  put(gpu, host, out, bytes);
}

void ynn_power_sum_rows_on_host(GpuContext& gpu, const float* g, int64_t rows, int64_t k,
                                const float* p, float* out) {
  const HostBytes in = fetch(gpu, g, static_cast<size_t>(rows * k) * sizeof(float));
  const HostBytes power = fetch(gpu, p, sizeof(float));
  const size_t bytes = static_cast<size_t>(rows) * sizeof(float);
  HostBytes host(std::max<size_t>(bytes, 1));
  cpu_backend().ynn_power_sum_rows(reinterpret_cast<const float*>(in.data()), rows, k,
                                   reinterpret_cast<const float*>(power.data()),
                                   reinterpret_cast<float*>(host.data()));
  put(gpu, host, out, bytes);
}

void random_poisson_on_host(GpuContext& gpu, const uint32_t* key, const float* lam, int64_t n,
                            int32_t* out) {
  const HostBytes k = fetch(gpu, key, 2 * sizeof(uint32_t));
  const HostBytes l = fetch(gpu, lam, static_cast<size_t>(n) * sizeof(float));
  const size_t bytes = static_cast<size_t>(n) * sizeof(int32_t);
  HostBytes host(std::max<size_t>(bytes, 1));
  cpu_backend().random_poisson(reinterpret_cast<const uint32_t*>(k.data()),
                               reinterpret_cast<const float*>(l.data()), n,
                               reinterpret_cast<int32_t*>(host.data()));
  put(gpu, host, out, bytes);
}

void cholesky_on_host(GpuContext& gpu, DType dtype, const std::byte* in, int64_t batch, int64_t n,
                      std::byte* out) {
  const size_t bytes = static_cast<size_t>(batch * n * n) * dtype_size(dtype);
  const HostBytes a = fetch(gpu, in, bytes);
  HostBytes host(std::max<size_t>(bytes, 1));
  cpu_backend().cholesky(dtype, a.data(), batch, n, host.data());
  put(gpu, host, out, bytes);
}

void qr_on_host(GpuContext& gpu, DType dtype, const std::byte* in, int64_t batch, int64_t m,
                int64_t n, std::byte* q, std::byte* r) {
  const int64_t k = std::min(m, n);
  const size_t width = dtype_size(dtype);
  const size_t in_bytes = static_cast<size_t>(batch * m * n) * width;
  const size_t q_bytes = static_cast<size_t>(batch * m * k) * width;
  const size_t r_bytes = static_cast<size_t>(batch * k * n) * width;
  const HostBytes a = fetch(gpu, in, in_bytes);
  HostBytes hq(std::max<size_t>(q_bytes, 1)), hr(std::max<size_t>(r_bytes, 1));
  cpu_backend().qr(dtype, a.data(), batch, m, n, hq.data(), hr.data());
  put(gpu, hq, q, q_bytes);
  put(gpu, hr, r, r_bytes);
}

void triangular_solve_on_host(GpuContext& gpu, DType dtype, const std::byte* a, const std::byte* b,
                              int64_t batch, int64_t m, int64_t n, TriangularSolve how,
                              std::byte* out) {
  const size_t width = dtype_size(dtype);
  const int64_t k = how.left_side ? m : n;
  const size_t a_bytes = static_cast<size_t>(batch * k * k) * width;
  const size_t b_bytes = static_cast<size_t>(batch * m * n) * width;
  const HostBytes ha = fetch(gpu, a, a_bytes);
  const HostBytes hb = fetch(gpu, b, b_bytes);
  HostBytes host(std::max<size_t>(b_bytes, 1));
  cpu_backend().triangular_solve(dtype, ha.data(), hb.data(), batch, m, n, how, host.data());
  put(gpu, host, out, b_bytes);
}

void scatter_on_host(GpuContext& gpu, ScatterCombine how, DType dtype, const std::byte* updates,
                     const Shape& shape, int axis, const int32_t* indices, int64_t count,
                     std::byte* out) {
  const size_t out_bytes = elements(shape) * dtype_size(dtype);
  const size_t update_bytes =
      out_bytes / static_cast<size_t>(std::max<int64_t>(shape[static_cast<size_t>(axis)], 1)) *
      static_cast<size_t>(count);
  HostBytes host = fetch(gpu, out, out_bytes);
  const HostBytes u = fetch(gpu, updates, update_bytes);
  const HostBytes i = fetch(gpu, indices, static_cast<size_t>(count) * sizeof(int32_t));
  cpu_backend().scatter(how, dtype, u.data(), shape, axis,
                        reinterpret_cast<const int32_t*>(i.data()), count, host.data());
  put(gpu, host, out, out_bytes);
}

}  // namespace spmd::kernels::cuda
