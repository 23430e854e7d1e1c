// kernels::cumsum and cumprod (kernels/ordering.h) down a leading axis, where every column is
// scanned side by side with the others, against each column scanned alone as a line: the same
// bits at every length around XLA's rows of 16 and rows of rows, for widths around the chunks
// of columns the team takes, with signed zeros, NaN and infinities, on every team.
#include "kernels/ordering.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <type_traits>
#include <vector>

#include "kernels/thread_team.h"

namespace {

namespace k = spmd::kernels;
using spmd::DType;

template <class T>
std::vector<T> matrix(int64_t n, int64_t w, bool multiply, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<T> v(static_cast<size_t>(n * w));
  for (auto& x : v) {
    if constexpr (std::is_floating_point_v<T>) {
      std::uniform_real_distribution<T> d(multiply ? T(0.9) : T(-1), multiply ? T(1.1) : T(1));
      x = d(rng);
    } else {
      x = static_cast<T>(rng());
    }
  }
  if constexpr (std::is_floating_point_v<T>) {
    // A column of -0 (whose sum stays -0 only if no +0 is added), and specials elsewhere.
    for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i * w)] = T(-0.0);
    v[static_cast<size_t>(w / 2)] = NAN;
    v[static_cast<size_t>((n / 2) * w + w - 1)] = INFINITY;
  }
  return v;
}

template <class T, bool kMultiply>
void expect_columns_are_lines(DType dtype, int64_t n, int64_t w) {
  const std::vector<T> x = matrix<T>(n, w, kMultiply, static_cast<uint32_t>(n * 7 + w));
  const auto scan = kMultiply ? k::cumprod : k::cumsum;
  std::vector<T> got(x.size());
  {
    k::ThreadTeam team(2);
    const k::TeamScope on(&team);
    scan(dtype, reinterpret_cast<const std::byte*>(x.data()), {n, w}, 0,
         reinterpret_cast<std::byte*>(got.data()));
  }
  std::vector<T> column(static_cast<size_t>(n)), want(static_cast<size_t>(n));
  for (int64_t j = 0; j < w; ++j) {
    for (int64_t i = 0; i < n; ++i)
      column[static_cast<size_t>(i)] = x[static_cast<size_t>(i * w + j)];
    scan(dtype, reinterpret_cast<const std::byte*>(column.data()), {n}, 0,
         reinterpret_cast<std::byte*>(want.data()));
    for (int64_t i = 0; i < n; ++i) {
      const T g = got[static_cast<size_t>(i * w + j)], e = want[static_cast<size_t>(i)];
      using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
      ASSERT_EQ(std::bit_cast<Bits>(g), std::bit_cast<Bits>(e))
          << spmd::dtype_name(dtype) << (kMultiply ? " cumprod" : " cumsum") << ", " << n << " x "
          << w << ", column " << j << ", row " << i << ": " << g << ", the line's " << e;
    }
  }
}

TEST(Ordering, ScansDownALeadingAxisAreEachColumnsScanBitForBit) {
  for (const int64_t n : {1, 2, 16, 17, 255, 256, 257, 4097}) {
    for (const int64_t w : {3, 130}) {
      expect_columns_are_lines<float, false>(DType::kFloat32, n, w);
      expect_columns_are_lines<float, true>(DType::kFloat32, n, w);
      expect_columns_are_lines<double, false>(DType::kFloat64, n, w);
      expect_columns_are_lines<int32_t, false>(DType::kInt32, n, w);
      expect_columns_are_lines<uint64_t, true>(DType::kUInt64, n, w);
    }
  }
}

// take along the last axis, element by element (elements of 1 to 8 bytes) and as rows (16
// bytes), against the definition: out[o][i] = in[o][clamp(indices[i])], indices out of range,
// repeated and reversed, more or fewer than the axis, on a team of two.
TEST(Ordering, TakeAlongTheLastAxisIsEachLineAtTheClampedIndices) {
  const int64_t outer = 37, n = 300;
  std::mt19937 rng(5);
  std::vector<int32_t> reversed(n), random(500);
  for (int64_t i = 0; i < n; ++i)
    reversed[static_cast<size_t>(i)] = static_cast<int32_t>(n - 1 - i);
  for (auto& i : random) i = static_cast<int32_t>(rng() % 700) - 200;  // clamped both ways
  for (const size_t size : {size_t{1}, size_t{2}, size_t{4}, size_t{8}, size_t{16}}) {
    std::vector<std::byte> x(static_cast<size_t>(outer * n) * size);
    for (auto& b : x) b = static_cast<std::byte>(rng() & 0xff);
    for (const std::vector<int32_t>* idx : {&reversed, &random}) {
      const auto count = static_cast<int64_t>(idx->size());
      std::vector<std::byte> got(static_cast<size_t>(outer * count) * size);
      {
        k::ThreadTeam team(2);
        const k::TeamScope on(&team);
        k::take(size, x.data(), {outer, n}, 1, idx->data(), count, got.data());
      }
      for (int64_t o = 0; o < outer; ++o) {
        for (int64_t i = 0; i < count; ++i) {
          const int64_t at = std::clamp<int64_t>((*idx)[static_cast<size_t>(i)], 0, n - 1);
          ASSERT_EQ(std::memcmp(got.data() + static_cast<size_t>(o * count + i) * size,
                                x.data() + static_cast<size_t>(o * n + at) * size, size),
                    0)
              << size << "-byte elements, line " << o << ", index " << i;
        }
      }
    }
  }
}

}  // namespace
