// How a large product is cut into calls (kernels/matmul.h: product_cut): panels one way for
// most shapes, tiles both ways for a product large in m and n; the cut follows the shape alone;
// and a product cut both ways, short edge tiles included, is every element of the product on
// every team.
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "kernels/matmul.h"
#include "kernels/thread_team.h"

namespace {

namespace k = spmd::kernels;

struct Expected {
  k::MatmulShape s;
  int64_t rows, cols, tiles;
};

TEST(ProductCut, LargeProductsAreCutBothWaysIntoTheSquarestTilesThatKeepEightCoresBusy) {
  const Expected cases[] = {
      // an MLP's weight gradient, h^T dy: eight tiles, the wider columns on a tie
      {{.m = 2048, .k = 256, .n = 2048, .transpose_a = true}, 512, 1024, 8},
      {{.m = 2048, .k = 2048, .n = 2048}, 512, 1024, 8},
      // 2^36 multiply-adds want 64 tiles: the squarest of them
      {{.m = 4096, .k = 4096, .n = 4096}, 512, 512, 64},
      // ragged extents: their whole length, or widths of 256 doubled; short edge tiles
      {{.m = 1100, .k = 240, .n = 1030}, 512, 512, 9},
      // one side under 1024: panels of whole rows, 256 wide
      {{.m = 2048, .k = 256, .n = 512, .transpose_a = true}, 256, 512, 8},
  };
  for (const Expected& e : cases) {
    const k::ProductCut cut = k::product_cut(e.s);
    EXPECT_EQ(cut.rows, e.rows) << e.s.m << "x" << e.s.k << "x" << e.s.n;
    EXPECT_EQ(cut.cols, e.cols) << e.s.m << "x" << e.s.k << "x" << e.s.n;
    EXPECT_EQ(cut.tiles(e.s), e.tiles) << e.s.m << "x" << e.s.k << "x" << e.s.n;
  }
}

TEST(ProductCut, OtherProductsKeepTheirPanelsOfWholeRowsOrColumns) {
  const Expected cases[] = {
      // 256 rows: whole rows of c, 256-wide column panels
      {{.m = 256, .k = 2048, .n = 2048}, 256, 256, 8},
      {{.m = 256, .k = 2048, .n = 2048, .transpose_b = true}, 256, 256, 8},
      // under 2^28 multiply-adds, though both extents reach 1024
      {{.m = 1024, .k = 128, .n = 1024}, 1024, 256, 4},
      // extents under 512: panels of 128
      {{.m = 256, .k = 256, .n = 256}, 256, 128, 2},
      // too small to wake a helper: one call
      {{.m = 7, .k = 5, .n = 3}, 7, 3, 1},
      {{.m = 0, .k = 5, .n = 3}, 0, 3, 1},
  };
  for (const Expected& e : cases) {
    const k::ProductCut cut = k::product_cut(e.s);
    EXPECT_EQ(cut.rows, e.rows) << e.s.m << "x" << e.s.k << "x" << e.s.n;
    EXPECT_EQ(cut.cols, e.cols) << e.s.m << "x" << e.s.k << "x" << e.s.n;
    EXPECT_EQ(cut.tiles(e.s), e.tiles) << e.s.m << "x" << e.s.k << "x" << e.s.n;
  }
}

// c = a · b (a transposed where s says), summed in float64 as the reference.
std::vector<double> reference(const k::MatmulShape& s, const std::vector<float>& a,
                              const std::vector<float>& b) {
  std::vector<double> c(size_t(s.m * s.n));
  for (int64_t i = 0; i < s.m; ++i) {
    for (int64_t p = 0; p < s.k; ++p) {
      const double x = s.transpose_a ? a[size_t(p * s.m + i)] : a[size_t(i * s.k + p)];
      for (int64_t j = 0; j < s.n; ++j) c[size_t(i * s.n + j)] += x * b[size_t(p * s.n + j)];
    }
  }
  return c;
}

TEST(ProductCut, AProductCutBothWaysIsEveryElementOfTheProductOnEveryTeam) {
  for (const bool transpose_a : {false, true}) {
    const k::MatmulShape s{.m = 1100, .k = 240, .n = 1030, .transpose_a = transpose_a};
    ASSERT_GT(k::product_cut(s).tiles(s), 1);
    ASSERT_LT(k::product_cut(s).cols, s.n);  // cut both ways, short tiles at the edges
    ASSERT_LT(k::product_cut(s).rows, s.m);
    std::vector<float> a(size_t(s.m * s.k)), b(size_t(s.k * s.n));
    for (size_t i = 0; i < a.size(); ++i) a[i] = float(std::sin(0.37 * double(i)));
    for (size_t i = 0; i < b.size(); ++i) b[i] = float(std::cos(0.53 * double(i)));
    const std::vector<double> want = reference(s, a, b);
    std::vector<float> first;
    for (const int size : {1, 2, 3}) {
      k::ThreadTeam team(size);
      const k::TeamScope scope(&team);
      std::vector<float> c(size_t(s.m * s.n), NAN);
      k::matmul(spmd::DType::kFloat32, s, reinterpret_cast<const std::byte*>(a.data()),
                reinterpret_cast<const std::byte*>(b.data()),
                reinterpret_cast<std::byte*>(c.data()));
      int64_t wrong = 0;
      for (size_t i = 0; i < c.size(); ++i) wrong += !(std::abs(c[i] - want[i]) <= 1e-4);
      EXPECT_EQ(wrong, 0) << "team of " << size << ", transpose_a " << transpose_a;
      if (first.empty()) first = c;
      EXPECT_EQ(std::memcmp(c.data(), first.data(), c.size() * sizeof(float)), 0)
          << "team of " << size << ": other bytes than a team of 1";
    }
  }
}

}  // namespace
