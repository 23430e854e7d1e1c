// Launches of the ordering kernels (ordering.cu), for ordering.cc. Private to src/kernels/cuda.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "kernels/cuda/gpu_context.h"
#include "kernels/ordering.h"
#include "spmd/dtype.h"

namespace spmd::kernels::cuda {

// The scan of each of outer × inner lines of n values (line (o, j) at o·n·inner + j, stride
// inner). Returns cudaGetLastError().
cudaError_t launch_scan(bool multiply, DType dtype, const std::byte* in, int64_t outer, int64_t n,
                        int64_t inner, std::byte* out, int blocks, cudaStream_t stream);
cudaError_t launch_search_sorted(DType dtype, const std::byte* sorted, int64_t n,
                                 const std::byte* queries, int64_t count, int32_t* out, int blocks,
                                 cudaStream_t stream);
// Sorts indices by key on gpu's stream, with memory from its pool; throws what GpuContext and
// status.h throw.
void run_top_k(GpuContext& gpu, DType dtype, const std::byte* in, int64_t n, int64_t k,
               int32_t* out);
// ordering.h's scatter_add into a non-empty result, fewer than 2^31 indices.
void run_scatter_add(GpuContext& gpu, DType dtype, const std::byte* updates, const Shape& shape,
                     int axis, const int32_t* indices, int64_t count, std::byte* out);
// ordering.h's sort of 1 to 2^31 - 1 elements, a payload of 0, 1, 2, 4 or 8 bytes an element.
void run_sort(GpuContext& gpu, DType key_dtype, const std::byte* keys, const SortSpec& spec,
              const std::byte* payload, std::byte* out);

}  // namespace spmd::kernels::cuda
