// Launches of the reduction kernels (reduce.cu), for reduce.cc. Private to src/kernels/cuda.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "kernels/scalar_reduce.h"

namespace spmd::kernels::cuda {

// Each returns cudaGetLastError() after queuing its kernel on `stream`, over at most `max_blocks`
// blocks.
//
// launch_reduce cuts the axis into chunks of `chunk` elements (the last one shorter; any
// chunk ≥ extent is the whole axis) and reduces each: `out` has shape (outer, chunks, inner).
cudaError_t launch_reduce(const ReducePlan& plan, int64_t chunk, const std::byte* in,
                          std::byte* out, int max_blocks, cudaStream_t stream);
cudaError_t launch_argmax(const ReducePlan& plan, const std::byte* in, std::byte* out,
                          int max_blocks, cudaStream_t stream);

}  // namespace spmd::kernels::cuda
