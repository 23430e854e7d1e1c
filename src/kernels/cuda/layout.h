// Layout changes on a GPU (kernels/layout.h's contract: broadcast, transpose, slice,
// concatenate; and ordering.h's take), each one launch of a strided copy (take: of a gather)
// (kernels/strided_copy.h, whose plans the CPU tests check). Elements of 1, 2, 4 or 8 bytes; ranks
// up to 8. Queued on the GPU's stream; the call returns. Throws InvalidArgument for another element
// size or a larger rank.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "kernels/cuda/gpu_context.h"
#include "spmd/shape.h"

namespace spmd::kernels::cuda {

void broadcast(GpuContext& gpu, size_t element_size, const std::byte* in, const Shape& from,
               std::byte* out, const Shape& to);
void transpose(GpuContext& gpu, size_t element_size, const std::byte* in, const Shape& shape,
               std::span<const int> perm, std::byte* out);
void slice(GpuContext& gpu, size_t element_size, const std::byte* in, const Shape& shape,
           std::span<const int64_t> start, const Shape& extent, std::byte* out);
void strided_slice(GpuContext& gpu, size_t element_size, const std::byte* in, const Shape& shape,
                   std::span<const int64_t> start, std::span<const int64_t> step,
                   const Shape& extent, std::byte* out);
void concatenate(GpuContext& gpu, size_t element_size, std::span<const std::byte* const> in,
                 std::span<const Shape> shapes, int axis, std::byte* out);
// kernels/ordering.h's take: out = in's entries `indices` (device memory, `count` of them) along
// `axis`, each index clamped into range as XLA's gather clamps it.
// `fill` (device memory, one element, or nullptr): what an index outside the axis gives instead
// of being clamped.
void take(GpuContext& gpu, size_t element_size, const std::byte* in, const Shape& shape, int axis,
          const int32_t* indices, int64_t count, std::byte* out, const std::byte* fill = nullptr);

}  // namespace spmd::kernels::cuda
