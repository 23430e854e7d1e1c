// Layout changes (layout.h) as one plan: copy a box of `extent` elements from strided positions
// of one buffer to strided positions of another. Broadcast (stride 0 where a dimension is
// stretched), transpose (the input's strides permuted), slice (a base offset) and each input of a
// concatenation (a base offset in the output) are all such a copy. The CUDA backend's layout
// kernel (cuda/layout.cu) runs a plan per element; the plans are made and checked here, and
// tests/kernels/strided_copy_test.cc runs them on the host against layout.h's kernels. Pure;
// thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "kernels/random_bits.h"
#include "kernels/scalar_ops.h"
#include "spmd/shape.h"

namespace spmd::kernels {

// The largest rank a plan takes (layout.h's CPU kernels take kMaxRank = 6).
constexpr int kMaxStridedRank = 8;

struct StridedCopy {
  int32_t rank = 0;  // 0: one element
  int64_t extent[kMaxStridedRank] = {};
  int64_t from_stride[kMaxStridedRank] = {};  // in elements
  int64_t to_stride[kMaxStridedRank] = {};
  int64_t from_base = 0;
  int64_t to_base = 0;
  int64_t count = 1;  // the product of extent
};

// Where element i (row-major over extent) of the box is read and written, in elements.
SPMD_HOST_DEVICE inline void strided_offsets(const StridedCopy& c, int64_t i, int64_t* from,
                                             int64_t* to) {
  int64_t f = c.from_base, t = c.to_base;
  for (int32_t d = c.rank - 1; d >= 0; --d) {
    const int64_t index = i % c.extent[d];
    i /= c.extent[d];
    f += index * c.from_stride[d];
    t += index * c.to_stride[d];
  }
  *from = f;
  *to = t;
}

// Row-major strides of `shape`, in elements (the last dimension's is 1).
std::vector<int64_t> row_major_strides(const Shape& shape);

// The plans of layout.h's four kernels, for the same arguments (shapes trusted, as there).
// InvalidArgument for a rank above kMaxStridedRank.
StridedCopy broadcast_plan(const Shape& from, const Shape& to);
StridedCopy transpose_plan(const Shape& shape, std::span<const int> perm);
StridedCopy slice_plan(const Shape& shape, std::span<const int64_t> start, const Shape& extent);
// layout.h's strided_slice: steps may be negative (a base at the first element read, strides
// backwards).
StridedCopy strided_slice_plan(const Shape& shape, std::span<const int64_t> start,
                               std::span<const int64_t> step, const Shape& extent);
// One plan per input, each writing its part of the output.
std::vector<StridedCopy> concatenate_plans(std::span<const Shape> shapes, int axis);
// A block of random bits (random_bits.h) as a box of the whole array: element j of the block
// reads "from" its flat index in the array, the block's offset included (wrapping as uint64).
StridedCopy random_block_plan(const RandomBlock& block);

// Runs `plan` on the host, for elements of `element_size` bytes (the tests' reference).
void run_strided_copy(const StridedCopy& plan, size_t element_size, const std::byte* from,
                      std::byte* to);

}  // namespace spmd::kernels
