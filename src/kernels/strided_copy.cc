#include "kernels/strided_copy.h"

#include <fmt/format.h>

#include <cstring>

#include "spmd/error.h"

namespace spmd::kernels {
namespace {

void check_rank(size_t rank) {
  if (rank > kMaxStridedRank) {
    throw InvalidArgument(fmt::format("arrays of rank {} are not supported on GPUs (0 to {})", rank,
                                      kMaxStridedRank));
  }
}

// A plan over the box `extent`, written row-major into a buffer of that shape.
StridedCopy dense_output(const Shape& extent) {
  check_rank(extent.size());
  StridedCopy c;
  c.rank = static_cast<int32_t>(extent.size());
  const std::vector<int64_t> to = row_major_strides(extent);
  for (size_t d = 0; d < extent.size(); ++d) {
    c.extent[d] = extent[d];
    c.to_stride[d] = to[d];
  }
  c.count = shape_size(extent);
  return c;
}

}  // namespace

std::vector<int64_t> row_major_strides(const Shape& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;) strides[d - 1] = strides[d] * shape[d];
  return strides;
}

StridedCopy broadcast_plan(const Shape& from, const Shape& to) {
  StridedCopy c = dense_output(to);
  check_rank(from.size());
  const std::vector<int64_t> strides = row_major_strides(from);
  const size_t offset = to.size() - from.size();
  for (size_t d = 0; d < from.size(); ++d) {
    c.from_stride[offset + d] = from[d] == 1 ? 0 : strides[d];
  }
  return c;
}

StridedCopy transpose_plan(const Shape& shape, std::span<const int> perm) {
  Shape out(shape.size());
  for (size_t d = 0; d < shape.size(); ++d) out[d] = shape[static_cast<size_t>(perm[d])];
  StridedCopy c = dense_output(out);
  const std::vector<int64_t> strides = row_major_strides(shape);
  for (size_t d = 0; d < shape.size(); ++d)
    c.from_stride[d] = strides[static_cast<size_t>(perm[d])];
  return c;
}

StridedCopy slice_plan(const Shape& shape, std::span<const int64_t> start, const Shape& extent) {
  StridedCopy c = dense_output(extent);
  const std::vector<int64_t> strides = row_major_strides(shape);
  for (size_t d = 0; d < shape.size(); ++d) {
    c.from_stride[d] = strides[d];
    c.from_base += start[d] * strides[d];
  }
  return c;
}

StridedCopy strided_slice_plan(const Shape& shape, std::span<const int64_t> start,
                               std::span<const int64_t> step, const Shape& extent) {
  StridedCopy c = dense_output(extent);
  const std::vector<int64_t> strides = row_major_strides(shape);
  for (size_t d = 0; d < shape.size(); ++d) {
    c.from_stride[d] = step[d] * strides[d];
    c.from_base += start[d] * strides[d];
  }
  return c;
}

std::vector<StridedCopy> concatenate_plans(std::span<const Shape> shapes, int axis) {
  std::vector<StridedCopy> plans;
  if (shapes.empty()) return plans;
  Shape out = shapes[0];
  out[static_cast<size_t>(axis)] = 0;
  for (const Shape& s : shapes) out[static_cast<size_t>(axis)] += s[static_cast<size_t>(axis)];
  check_rank(out.size());
  const std::vector<int64_t> out_strides = row_major_strides(out);
  int64_t position = 0;  // along axis
  for (const Shape& s : shapes) {
    StridedCopy c;
    c.rank = static_cast<int32_t>(s.size());
    const std::vector<int64_t> in_strides = row_major_strides(s);
    for (size_t d = 0; d < s.size(); ++d) {
      c.extent[d] = s[d];
      c.from_stride[d] = in_strides[d];
      c.to_stride[d] = out_strides[d];
    }
    c.to_base = position * out_strides[static_cast<size_t>(axis)];
    c.count = shape_size(s);
    position += s[static_cast<size_t>(axis)];
    plans.push_back(c);
  }
  return plans;
}

StridedCopy random_block_plan(const RandomBlock& block) {
  StridedCopy c = dense_output(block.extent);
  const std::vector<int64_t> strides = row_major_strides(block.shape);
  uint64_t base = block.offset;
  for (size_t d = 0; d < block.shape.size(); ++d) {
    c.from_stride[d] = strides[d];
    base += static_cast<uint64_t>(block.start[d]) * static_cast<uint64_t>(strides[d]);
  }
  c.from_base = static_cast<int64_t>(base);
  return c;
}

void run_strided_copy(const StridedCopy& plan, size_t element_size, const std::byte* from,
                      std::byte* to) {
  for (int64_t i = 0; i < plan.count; ++i) {
    int64_t f = 0, t = 0;
    strided_offsets(plan, i, &f, &t);
    std::memcpy(to + t * static_cast<int64_t>(element_size),
                from + f * static_cast<int64_t>(element_size), element_size);
  }
}

}  // namespace spmd::kernels
