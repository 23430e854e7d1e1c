// kernels/strided_copy.h's plans, which the CUDA backend's layout kernel runs, run here on the
// host against layout.h's CPU kernels: broadcast, transpose, slice and concatenate over ranks 0
// to 6, bit for bit.
#include "kernels/strided_copy.h"

#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "kernels/layout.h"
#include "spmd/error.h"

namespace spmd::kernels {
namespace {

using Words = std::vector<uint32_t>;

Words iota_words(int64_t n) {
  Words v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), 1000u);
  return v;
}

const std::byte* bytes(const Words& w) { return reinterpret_cast<const std::byte*>(w.data()); }
std::byte* bytes(Words& w) { return reinterpret_cast<std::byte*>(w.data()); }

Words run(const StridedCopy& plan, const Words& in, int64_t out_size) {
  Words out(static_cast<size_t>(out_size), 0xDEADBEEF);
  run_strided_copy(plan, 4, bytes(in), bytes(out));
  return out;
}

TEST(StridedCopy, BroadcastIsTheCpuKernels) {
  const std::vector<std::pair<Shape, Shape>> cases = {{{}, {3}},
                                                      {{1}, {4}},
                                                      {{3}, {2, 3}},
                                                      {{2, 1}, {2, 5}},
                                                      {{1, 3, 1}, {4, 3, 2}},
                                                      {{5}, {1, 1, 1, 1, 5}},
                                                      {{2, 1, 3}, {2, 2, 2, 3}}};
  for (const auto& [from, to] : cases) {
    const Words in = iota_words(shape_size(from));
    Words want(static_cast<size_t>(shape_size(to)));
    broadcast(4, bytes(in), from.empty() ? Shape{1} : from, bytes(want), to);
    EXPECT_EQ(run(broadcast_plan(from, to), in, shape_size(to)), want) << to.size();
  }
}

TEST(StridedCopy, TransposeIsTheCpuKernels) {
  const std::vector<std::pair<Shape, std::vector<int>>> cases = {
      {{3}, {0}},
      {{2, 3}, {1, 0}},
      {{2, 3, 4}, {2, 0, 1}},
      {{2, 3, 4}, {1, 2, 0}},
      {{2, 1, 3, 2, 2, 3}, {5, 3, 1, 0, 4, 2}}};
  for (const auto& [shape, perm] : cases) {
    const Words in = iota_words(shape_size(shape));
    Words want(in.size());
    transpose(4, bytes(in), shape, perm, bytes(want));
    EXPECT_EQ(run(transpose_plan(shape, perm), in, shape_size(shape)), want) << shape.size();
  }
}

TEST(StridedCopy, SliceIsTheCpuKernels) {
  const Shape shape{4, 5, 6};
  const Words in = iota_words(shape_size(shape));
  const std::vector<int64_t> start{1, 2, 3};
  const Shape extent{2, 3, 2};
  Words want(static_cast<size_t>(shape_size(extent)));
  slice(4, bytes(in), shape, start, extent, bytes(want));
  EXPECT_EQ(run(slice_plan(shape, start, extent), in, shape_size(extent)), want);
  const Shape none{0, 3, 2};
  EXPECT_EQ(slice_plan(shape, start, none).count, 0);
}

TEST(StridedCopy, AStridedSliceIsTheCpuKernels) {
  const Shape shape{4, 5, 6};
  const Words in = iota_words(shape_size(shape));
  const std::vector<int64_t> start{3, 0, 5}, step{-1, 2, -3};
  const Shape extent{4, 3, 2};
  Words want(static_cast<size_t>(shape_size(extent)));
  strided_slice(4, bytes(in), shape, start, step, extent, bytes(want));
  EXPECT_EQ(run(strided_slice_plan(shape, start, step, extent), in, shape_size(extent)), want);
  EXPECT_EQ(want[0], in[static_cast<size_t>(3 * 30 + 5)]);  // the first element read
}

TEST(StridedCopy, ConcatenateIsTheCpuKernels) {
  for (int axis : {0, 1, 2}) {
    std::vector<Shape> shapes = {{2, 3, 4}, {2, 3, 4}, {2, 3, 4}};
    shapes[1][static_cast<size_t>(axis)] = 1;
    shapes[2][static_cast<size_t>(axis)] = 5;
    std::vector<Words> ins;
    std::vector<const std::byte*> pointers;
    int64_t total = 0;
    for (const Shape& s : shapes) {
      ins.push_back(iota_words(shape_size(s)));
      for (auto& w : ins.back()) w += static_cast<uint32_t>(total * 7);
      total += shape_size(s);
    }
    for (const Words& w : ins) pointers.push_back(bytes(w));
    Words want(static_cast<size_t>(total));
    concatenate(4, pointers, shapes, axis, bytes(want));
    Words got(want.size(), 0xDEADBEEF);
    const std::vector<StridedCopy> plans = concatenate_plans(shapes, axis);
    ASSERT_EQ(plans.size(), shapes.size());
    for (size_t k = 0; k < plans.size(); ++k)
      run_strided_copy(plans[k], 4, pointers[k], bytes(got));
    EXPECT_EQ(got, want) << "axis " << axis;
  }
}

// Element j of a block of random bits hashes the flat index random_bits.h's for_each_row gives it.
TEST(StridedCopy, ARandomBlockReadsEachElementsFlatIndex) {
  const std::vector<RandomBlock> blocks = {{{1, 2}, {}, {}, {}, 7},
                                           {{1, 2}, {10}, {3}, {5}, 0},
                                           {{1, 2}, {4, 6, 5}, {1, 2, 0}, {2, 3, 5}, 1000},
                                           {{1, 2}, {3, 4}, {0, 1}, {3, 0}, 0}};
  for (const RandomBlock& b : blocks) {
    std::vector<uint64_t> want;
    for_each_row(b, [&](uint64_t first, int64_t, int64_t n) {
      for (int64_t c = 0; c < n; ++c) want.push_back(first + static_cast<uint64_t>(c));
    });
    const StridedCopy plan = random_block_plan(b);
    ASSERT_EQ(plan.count, static_cast<int64_t>(want.size()));
    for (int64_t j = 0; j < plan.count; ++j) {
      int64_t flat = 0, unused = 0;
      strided_offsets(plan, j, &flat, &unused);
      EXPECT_EQ(static_cast<uint64_t>(flat), want[static_cast<size_t>(j)]) << j;
    }
  }
}

TEST(StridedCopy, RanksAboveEightAreRefused) {
  EXPECT_THROW(broadcast_plan({1}, Shape(9, 1)), InvalidArgument);
  EXPECT_NO_THROW(broadcast_plan({1}, Shape(8, 1)));
}

}  // namespace
}  // namespace spmd::kernels
