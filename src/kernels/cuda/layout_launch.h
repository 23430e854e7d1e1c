// One launch of the strided-copy kernel (layout.cu), for layout.cc. Private to src/kernels/cuda.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "kernels/strided_copy.h"

namespace spmd::kernels::cuda {

// Queues `plan` for elements of `element_size` bytes (1, 2, 4 or 8); returns cudaGetLastError().
cudaError_t launch_strided_copy(const StridedCopy& plan, size_t element_size, const std::byte* from,
                                std::byte* to, int blocks, cudaStream_t stream);

// Queues take (layout.h) of an array viewed as outer × n × inner, `count` indices; `fill` (one
// element in device memory, or nullptr to clamp) for the indices outside the axis.
cudaError_t launch_take(size_t element_size, const std::byte* in, int64_t outer, int64_t n,
                        int64_t inner, const int32_t* indices, int64_t count, std::byte* out,
                        const std::byte* fill, int blocks, cudaStream_t stream);

}  // namespace spmd::kernels::cuda
