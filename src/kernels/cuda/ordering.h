// ordering.h's order-dependent kernels on a GPU, equal to the CPU's (and JAX's) bit for bit:
// cumsum and cumprod in XLA's order (kernels/scalar_order.h's online scan, one thread per line),
// jnp.searchsorted's binary search (one thread per query), and lax.top_k (CUB's stable radix
// sort, descending, of JAX's sort keys: the lower index first among equal values), and the stable
// sort along an axis (two of CUB's stable radix sorts: by key, then by line). Queued on the
// GPU's stream; the call returns. Pointers are device memory of `gpu`. Throws InvalidArgument
// for a dtype orderable() refuses.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/cuda/gpu_context.h"
#include "kernels/ordering.h"
#include "spmd/dtype.h"
#include "spmd/shape.h"

namespace spmd::kernels::cuda {

void cumsum(GpuContext& gpu, DType dtype, const std::byte* in, const Shape& shape, int axis,
            std::byte* out);
void cumprod(GpuContext& gpu, DType dtype, const std::byte* in, const Shape& shape, int axis,
             std::byte* out);
void search_sorted(GpuContext& gpu, DType dtype, const std::byte* sorted, int64_t n,
                   const std::byte* queries, int64_t count, int32_t* out);
// Uses temporary device memory of about n × 12 bytes plus CUB's scratch, from the GPU's pool.
void top_k(GpuContext& gpu, DType dtype, const std::byte* in, int64_t n, int64_t k, int32_t* out);
// ordering.h's scatter_add, in its order: the indices sorted stably (CUB), then one thread per
// result element sums its run of updates in their order. Uses about 16 bytes an index of
// temporary memory plus CUB's scratch; InvalidArgument for a dtype that is not floating.
void scatter_add(GpuContext& gpu, DType dtype, const std::byte* updates, const Shape& shape,
                 int axis, const int32_t* indices, int64_t count, std::byte* out);
// ordering.h's sort. Uses temporary device memory of about 24 bytes an element plus CUB's scratch;
// InvalidArgument for 2^31 elements or more in all.
void sort(GpuContext& gpu, DType key_dtype, const std::byte* keys, const SortSpec& spec,
          const std::byte* payload, std::byte* out);

}  // namespace spmd::kernels::cuda
