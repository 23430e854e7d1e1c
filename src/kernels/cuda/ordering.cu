// The ordering kernels: scans, binary searches, and top_k through CUB's radix sort.
#include <cmath>
#include <cub/device/device_radix_sort.cuh>

#include "kernels/cuda/ordering_launch.h"
#include "kernels/cuda/status.h"
#include "kernels/scalar_order.h"

namespace spmd::kernels::cuda {
namespace {

template <class F>
void visit_orderable(DType dtype, F&& f) {
  switch (dtype) {
    case DType::kInt32:
      return f(int32_t{});
    case DType::kInt64:
      return f(int64_t{});
    case DType::kUInt32:
      return f(uint32_t{});
    case DType::kUInt64:
      return f(uint64_t{});
    case DType::kFloat64:
      return f(double{});
    default:
      return f(float{});
  }
}

template <class T, bool kMultiply>
__global__ void __launch_bounds__(256)
    scan_kernel(const T* in, int64_t outer, int64_t n, int64_t inner, T* out) {
  const int64_t lines = outer * inner;
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  for (int64_t line = int64_t{blockIdx.x} * blockDim.x + threadIdx.x; line < lines;
       line += stride) {
    const int64_t base = line / inner * n * inner + line % inner;
    scalar::XlaScan<T, kMultiply> scan(n);
    for (int64_t i = 0; i < n; ++i) out[base + i * inner] = scan.feed(in[base + i * inner]);
  }
}

template <class T>
__global__ void __launch_bounds__(256)
    search_kernel(const T* sorted, int64_t n, int levels, const T* queries, int64_t count,
                  int32_t* out) {
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  for (int64_t i = int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < count; i += stride) {
    out[i] = scalar::search_sorted_one(sorted, n, levels, queries[i]);
  }
}

// keys[i] = JAX's sort key of in[i], values[i] = i.
template <class T, class Key>
__global__ void __launch_bounds__(256)
    key_kernel(const T* in, int64_t n, Key* keys, int32_t* values) {
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  for (int64_t i = int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n; i += stride) {
    keys[i] = static_cast<Key>(scalar::sort_key(in[i]));
    values[i] = static_cast<int32_t>(i);
  }
}

int blocks_for(int64_t n, int max_blocks) {
  return static_cast<int>(std::max<int64_t>(1, std::min<int64_t>((n + 255) / 256, max_blocks)));
}

}  // namespace

cudaError_t launch_scan(bool multiply, DType dtype, const std::byte* in, int64_t outer, int64_t n,
                        int64_t inner, std::byte* out, int blocks, cudaStream_t stream) {
  visit_orderable(dtype, [&](auto zero) {
    using T = decltype(zero);
    const auto* x = reinterpret_cast<const T*>(in);
    auto* y = reinterpret_cast<T*>(out);
    if (multiply) {
      scan_kernel<T, true><<<blocks, 256, 0, stream>>>(x, outer, n, inner, y);
    } else {
      scan_kernel<T, false><<<blocks, 256, 0, stream>>>(x, outer, n, inner, y);
    }
  });
  return cudaGetLastError();
}

cudaError_t launch_search_sorted(DType dtype, const std::byte* sorted, int64_t n,
                                 const std::byte* queries, int64_t count, int32_t* out, int blocks,
                                 cudaStream_t stream) {
  const int levels = static_cast<int>(std::ceil(std::log2(static_cast<double>(n) + 1)));
  visit_orderable(dtype, [&](auto zero) {
    using T = decltype(zero);
    search_kernel<T><<<blocks, 256, 0, stream>>>(reinterpret_cast<const T*>(sorted), n, levels,
                                                 reinterpret_cast<const T*>(queries), count, out);
  });
  return cudaGetLastError();
}

void run_top_k(GpuContext& gpu, DType dtype, const std::byte* in, int64_t n, int64_t k,
               int32_t* out) {
  visit_orderable(dtype, [&](auto zero) {
    using T = decltype(zero);
    using Key = decltype(scalar::sort_key(T{}));
    const int max_blocks = gpu.multiprocessors() * 8;
    DeviceBuffer keys(gpu, n * sizeof(Key)), sorted_keys(gpu, n * sizeof(Key));
    DeviceBuffer values(gpu, n * sizeof(int32_t)), sorted_values(gpu, n * sizeof(int32_t));
    auto* k_in = reinterpret_cast<Key*>(keys.data());
    auto* k_out = reinterpret_cast<Key*>(sorted_keys.data());
    auto* v_in = reinterpret_cast<int32_t*>(values.data());
    auto* v_out = reinterpret_cast<int32_t*>(sorted_values.data());
    key_kernel<T, Key><<<blocks_for(n, max_blocks), 256, 0, gpu.stream()>>>(
        reinterpret_cast<const T*>(in), n, k_in, v_in);
    check_cuda(cudaGetLastError(), "launch of top_k's key kernel", gpu.ordinal());
    size_t scratch_bytes = 0;
    check_cuda(
        cub::DeviceRadixSort::SortPairsDescending(nullptr, scratch_bytes, k_in, k_out, v_in, v_out,
                                                  n, 0, sizeof(Key) * 8, gpu.stream()),
        "cub::DeviceRadixSort::SortPairsDescending (size query)", gpu.ordinal());
    DeviceBuffer scratch(gpu, scratch_bytes);
    check_cuda(
        cub::DeviceRadixSort::SortPairsDescending(scratch.data(), scratch_bytes, k_in, k_out, v_in,
                                                  v_out, n, 0, sizeof(Key) * 8, gpu.stream()),
        "cub::DeviceRadixSort::SortPairsDescending", gpu.ordinal());
    check_cuda(cudaMemcpyAsync(out, v_out, static_cast<size_t>(k) * sizeof(int32_t),
                               cudaMemcpyDeviceToDevice, gpu.stream()),
               "cudaMemcpyAsync (top_k's indices)", gpu.ordinal());
  });
}

}  // namespace spmd::kernels::cuda
