// The fill and iota kernels.
#include "kernels/cuda/fill_launch.h"

namespace spmd::kernels::cuda {
namespace {

__global__ void __launch_bounds__(256)
    fill_kernel(DType dtype, scalar::Slot value, std::byte* out, int64_t n) {
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  for (int64_t i = int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n; i += stride) {
    scalar::store(dtype, out, i, value);
  }
}

__global__ void __launch_bounds__(256) iota_kernel(DType dtype, std::byte* out, int64_t n) {
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  for (int64_t i = int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n; i += stride) {
    const scalar::Slot index = scalar::make_double(static_cast<double>(i));
    scalar::store(dtype, out, i, scalar::convert(DType::kFloat64, dtype, index));
  }
}

}  // namespace

cudaError_t launch_fill(DType dtype, scalar::Slot value, std::byte* out, int64_t n, int blocks,
                        cudaStream_t stream) {
  fill_kernel<<<blocks, 256, 0, stream>>>(dtype, value, out, n);
  return cudaGetLastError();
}

cudaError_t launch_iota(DType dtype, std::byte* out, int64_t n, int blocks, cudaStream_t stream) {
  iota_kernel<<<blocks, 256, 0, stream>>>(dtype, out, n);
  return cudaGetLastError();
}

}  // namespace spmd::kernels::cuda
