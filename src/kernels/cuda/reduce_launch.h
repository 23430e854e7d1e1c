// Launches of the reduction kernels (reduce.cu), for reduce.cc. Private to src/kernels/cuda.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "kernels/scalar_reduce.h"

namespace spmd::kernels::cuda {

// Each returns cudaGetLastError() after queuing its kernel on `stream`.
cudaError_t launch_reduce(const ReducePlan& plan, const std::byte* in, std::byte* out,
                          int max_blocks, cudaStream_t stream);
cudaError_t launch_argmax(const ReducePlan& plan, const std::byte* in, std::byte* out,
                          int max_blocks, cudaStream_t stream);

}  // namespace spmd::kernels::cuda
