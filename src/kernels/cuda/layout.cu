// The strided-copy kernel: each thread moves its elements by strided_offsets().
#include <cstdint>

#include "kernels/cuda/layout_launch.h"

namespace spmd::kernels::cuda {
namespace {

template <class E>
__global__ void __launch_bounds__(256)
    strided_copy_kernel(const __grid_constant__ StridedCopy plan, const E* from, E* to) {
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  for (int64_t i = int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < plan.count; i += stride) {
    int64_t f = 0, t = 0;
    strided_offsets(plan, i, &f, &t);
    to[t] = from[f];
  }
}

template <class E>
void launch(const StridedCopy& plan, const std::byte* from, std::byte* to, int blocks,
            cudaStream_t stream) {
  strided_copy_kernel<E><<<blocks, 256, 0, stream>>>(plan, reinterpret_cast<const E*>(from),
                                                     reinterpret_cast<E*>(to));
}

template <class E>
__global__ void __launch_bounds__(256)
    take_kernel(const E* in, int64_t outer, int64_t n, int64_t inner, const int32_t* indices,
                int64_t count, E* out, const E* fill) {
  const int64_t total = outer * count * inner;
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  for (int64_t k = int64_t{blockIdx.x} * blockDim.x + threadIdx.x; k < total; k += stride) {
    const int64_t o = k / (count * inner), c = k / inner % count, i = k % inner;
    const int64_t index = indices[c];
    if (fill != nullptr && (index < 0 || index >= n)) {
      out[k] = *fill;
      continue;
    }
    const int64_t at = min(max(index, int64_t{0}), n - 1);
    out[k] = in[(o * n + at) * inner + i];
  }
}

template <class E>
void launch_take_of(const std::byte* in, int64_t outer, int64_t n, int64_t inner,
                    const int32_t* indices, int64_t count, std::byte* out, const std::byte* fill,
                    int blocks, cudaStream_t stream) {
  take_kernel<E><<<blocks, 256, 0, stream>>>(reinterpret_cast<const E*>(in), outer, n, inner,
                                             indices, count, reinterpret_cast<E*>(out),
                                             reinterpret_cast<const E*>(fill));
}

}  // namespace

cudaError_t launch_take(size_t element_size, const std::byte* in, int64_t outer, int64_t n,
                        int64_t inner, const int32_t* indices, int64_t count, std::byte* out,
                        const std::byte* fill, int blocks, cudaStream_t stream) {
  switch (element_size) {
    case 1:
      launch_take_of<uint8_t>(in, outer, n, inner, indices, count, out, fill, blocks, stream);
      break;
    case 2:
      launch_take_of<uint16_t>(in, outer, n, inner, indices, count, out, fill, blocks, stream);
      break;
    case 4:
      launch_take_of<uint32_t>(in, outer, n, inner, indices, count, out, fill, blocks, stream);
      break;
    default:
      launch_take_of<uint64_t>(in, outer, n, inner, indices, count, out, fill, blocks, stream);
      break;
  }
  return cudaGetLastError();
}

cudaError_t launch_strided_copy(const StridedCopy& plan, size_t element_size, const std::byte* from,
                                std::byte* to, int blocks, cudaStream_t stream) {
  switch (element_size) {
    case 1:
      launch<uint8_t>(plan, from, to, blocks, stream);
      break;
    case 2:
      launch<uint16_t>(plan, from, to, blocks, stream);
      break;
    case 4:
      launch<uint32_t>(plan, from, to, blocks, stream);
      break;
    default:
      launch<uint64_t>(plan, from, to, blocks, stream);
      break;
  }
  return cudaGetLastError();
}

}  // namespace spmd::kernels::cuda
