// kernels/scalar_order.h, what the CUDA backend's cumsum, cumprod and search_sorted run, run here
// on the host against ordering.h's CPU kernels, bit for bit: lines of every length around XLA's
// rows of 16 (and rows of rows), signed zeros, NaN, integers that wrap, and queries between,
// equal to and outside the sorted values.
#include "kernels/scalar_order.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/ordering.h"

namespace spmd::kernels {
namespace {

template <class T>
std::vector<T> line(int64_t n, uint32_t seed, bool multiply) {
  std::mt19937 rng(seed);
  std::vector<T> v(static_cast<size_t>(n));
  for (auto& x : v) {
    if constexpr (std::is_floating_point_v<T>) {
      std::uniform_real_distribution<T> d(multiply ? T(0.9) : T(-1), multiply ? T(1.1) : T(1));
      x = d(rng);
    } else {
      x = static_cast<T>(rng());
    }
  }
  return v;
}

template <class T, bool kMultiply>
void expect_scan_matches(DType dtype, std::vector<T> x) {
  const auto n = static_cast<int64_t>(x.size());
  std::vector<T> want(x.size()), got(x.size());
  const auto* in = reinterpret_cast<const std::byte*>(x.data());
  if (kMultiply) {
    cumprod(dtype, in, {n}, 0, reinterpret_cast<std::byte*>(want.data()));
  } else {
    cumsum(dtype, in, {n}, 0, reinterpret_cast<std::byte*>(want.data()));
  }
  scalar::XlaScan<T, kMultiply> scan(n);
  for (int64_t i = 0; i < n; ++i)
    got[static_cast<size_t>(i)] = scan.feed(x[static_cast<size_t>(i)]);
  ASSERT_EQ(std::memcmp(got.data(), want.data(), got.size() * sizeof(T)), 0)
      << dtype_name(dtype) << (kMultiply ? " cumprod" : " cumsum") << " of " << n;
}

TEST(ScalarOrder, ScansAreTheCpusBitForBitAtEveryLength) {
  for (int64_t n : {1, 2, 15, 16, 17, 31, 255, 256, 257, 4095, 4096, 4097, 70001}) {
    expect_scan_matches<float, false>(DType::kFloat32, line<float>(n, 1, false));
    expect_scan_matches<float, true>(DType::kFloat32, line<float>(n, 2, true));
    expect_scan_matches<double, false>(DType::kFloat64, line<double>(n, 3, false));
    expect_scan_matches<int32_t, false>(DType::kInt32, line<int32_t>(n, 4, false));
    expect_scan_matches<uint32_t, true>(DType::kUInt32, line<uint32_t>(n, 5, true));
    expect_scan_matches<int64_t, true>(DType::kInt64, line<int64_t>(n, 6, true));
  }
}

TEST(ScalarOrder, SignedZerosAndNaNScanAsTheCpus) {
  std::vector<float> x(40, -0.0f);
  expect_scan_matches<float, false>(DType::kFloat32, x);
  expect_scan_matches<float, true>(DType::kFloat32, x);
  x[20] = NAN;
  x[3] = INFINITY;
  expect_scan_matches<float, false>(DType::kFloat32, x);
}

TEST(ScalarOrder, SearchSortedIsTheCpus) {
  std::vector<float> sorted{-INFINITY, -2.0f, -0.0f, 0.0f, 1.0f, 1.0f, 1.0f, 3.5f, INFINITY, NAN};
  const std::vector<float> queries{-5, -2,   -1,  0,        -0.0f, 0.5f,     1,
                                   2,  3.5f, 100, INFINITY, NAN,   -INFINITY};
  for (int64_t n = 1; n <= static_cast<int64_t>(sorted.size()); ++n) {
    std::vector<int32_t> want(queries.size());
    search_sorted(DType::kFloat32, reinterpret_cast<const std::byte*>(sorted.data()), n,
                  reinterpret_cast<const std::byte*>(queries.data()),
                  static_cast<int64_t>(queries.size()), want.data());
    const int levels = static_cast<int>(std::ceil(std::log2(static_cast<double>(n) + 1)));
    for (size_t i = 0; i < queries.size(); ++i) {
      EXPECT_EQ(scalar::search_sorted_one(sorted.data(), n, levels, queries[i]), want[i])
          << "query " << queries[i] << " in " << n;
    }
  }
}

}  // namespace
}  // namespace spmd::kernels
