// Launches of the fill and iota kernels (fill.cu), for fill.cc. Private to src/kernels/cuda.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "kernels/scalar_ops.h"

namespace spmd::kernels::cuda {

// out[i] = value (already of `dtype`'s class) / out[i] = i converted from float64, for n
// elements. Each returns cudaGetLastError().
cudaError_t launch_fill(DType dtype, scalar::Slot value, std::byte* out, int64_t n, int blocks,
                        cudaStream_t stream);
cudaError_t launch_iota(DType dtype, std::byte* out, int64_t n, int blocks, cudaStream_t stream);

}  // namespace spmd::kernels::cuda
