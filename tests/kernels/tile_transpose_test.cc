// kernels::transpose_rows (kernels/tile_transpose.h): the register tiles and their blocks move
// every byte where the element-by-element transpose does, at every shape around the tiles' and
// the blocks' edges, for any range of rows, writing nothing else; random bit patterns (signaling
// NaNs and subnormals among them) come out unchanged.
#include "kernels/tile_transpose.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

namespace {

namespace k = spmd::kernels;
using Bytes = std::vector<std::byte>;

Bytes random_bytes(size_t n, uint32_t seed) {
  std::mt19937 bits(seed);
  Bytes b(n);
  for (std::byte& x : b) x = static_cast<std::byte>(bits() & 0xff);
  return b;
}

// Rows [first, last) of a rows × cols matrix both ways, into buffers filled with 0xab: equal
// bytes, and each element where out[j][i] = in[i][j] says.
void expect_transposes_agree(size_t size, int64_t rows, int64_t cols, int64_t first, int64_t last) {
  const auto n = static_cast<size_t>(rows * cols) * size;
  const Bytes in = random_bytes(n, static_cast<uint32_t>(rows * 1000 + cols));
  Bytes got(n, std::byte{0xab});
  Bytes want(n, std::byte{0xab});
  k::transpose_rows(size, in.data(), rows, cols, first, last, got.data());
  k::transpose_rows_portable(size, in.data(), rows, cols, first, last, want.data());
  ASSERT_EQ(got, want) << size << "-byte elements, " << rows << " x " << cols << ", rows " << first
                       << " to " << last;
  for (int64_t i = first; i < last; ++i) {
    for (int64_t j = 0; j < cols; ++j) {
      const auto from = static_cast<size_t>(i * cols + j) * size;
      const auto to = static_cast<size_t>(j * rows + i) * size;
      for (size_t b = 0; b < size; ++b) ASSERT_EQ(want[to + b], in[from + b]);
    }
  }
}

TEST(TileTranspose, EveryShapeAroundTheTilesAndBlocksMovesEveryByte) {
  for (const size_t size : {size_t{4}, size_t{8}}) {
    if (!k::register_transpose_takes(size)) {
      GTEST_SKIP()
          << "no register transposes here (the CPU lacks AVX2): only the portable one runs";
    }
    for (const int64_t rows : {1, 3, 4, 7, 8, 9, 16, 31, 127, 128, 129, 300}) {
      for (const int64_t cols : {1, 5, 8, 12, 17, 64, 130, 257}) {
        expect_transposes_agree(size, rows, cols, 0, rows);
      }
    }
  }
}

TEST(TileTranspose, ARangeOfRowsWritesItsColumnsOfTheResultAndNothingElse) {
  for (const size_t size : {size_t{4}, size_t{8}}) {
    for (const auto& [first, last] :
         std::vector<std::pair<int64_t, int64_t>>{{0, 128}, {128, 256}, {3, 11}, {130, 300}}) {
      expect_transposes_agree(size, 300, 77, first, last);
    }
  }
}

TEST(TileTranspose, TakesFourAndEightByteElementsOnly) {
  for (const size_t size : {size_t{1}, size_t{2}, size_t{16}}) {
    EXPECT_FALSE(k::register_transpose_takes(size)) << size;
  }
  // Other sizes go through the portable path, which moves them too.
  expect_transposes_agree(2, 37, 19, 0, 37);
  expect_transposes_agree(16, 9, 21, 2, 9);
}

}  // namespace
