// Integer matrix products (kernels/matmul.h): through a float32 or float64 GEMM where every
// partial sum is an exact integer there, through Eigen in the type's own arithmetic where not,
// and either way the product of the type's wrapping arithmetic, bit for bit, on every team:
// checked against plain loops in unsigned 64-bit arithmetic, at the edges of each path.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/matmul.h"
#include "kernels/thread_team.h"

namespace {

namespace k = spmd::kernels;
using spmd::DType;

// c = a · b (a transposed where s says), each sum taken modulo 2^64, then narrowed to T: what T's
// own wrapping multiply-adds give.
template <class T>
std::vector<T> reference(const k::MatmulShape& s, const std::vector<T>& a,
                         const std::vector<T>& b) {
  std::vector<T> c(size_t(s.batch * s.m * s.n));
  for (int64_t q = 0; q < s.batch; ++q) {
    for (int64_t i = 0; i < s.m; ++i) {
      for (int64_t j = 0; j < s.n; ++j) {
        uint64_t sum = 0;
        for (int64_t p = 0; p < s.k; ++p) {
          const T x = s.transpose_a ? a[size_t(q * s.m * s.k + p * s.m + i)]
                                    : a[size_t(q * s.m * s.k + i * s.k + p)];
          const T y = b[size_t(q * s.k * s.n + p * s.n + j)];
          sum += uint64_t(int64_t(x)) * uint64_t(int64_t(y));
        }
        c[size_t(q * s.m * s.n + i * s.n + j)] = static_cast<T>(sum);
      }
    }
  }
  return c;
}

template <class T>
std::vector<T> product(DType dtype, const k::MatmulShape& s, const std::vector<T>& a,
                       const std::vector<T>& b) {
  std::vector<T> c(size_t(s.batch * s.m * s.n), T(7));
  k::matmul(dtype, s, reinterpret_cast<const std::byte*>(a.data()),
            reinterpret_cast<const std::byte*>(b.data()), reinterpret_cast<std::byte*>(c.data()));
  return c;
}

// Operands of `s` with values drawn from [lo, hi], the first of each set to `edge_a` and
// `edge_b`, so that max|a| and max|b| are known.
template <class T>
void expect_exact(DType dtype, const k::MatmulShape& s, int64_t lo, int64_t hi, T edge_a, T edge_b,
                  const std::string& what) {
  std::mt19937_64 rng(11);
  std::uniform_int_distribution<int64_t> value(lo, hi);
  std::vector<T> a(size_t(s.batch * s.m * s.k)), b(size_t(s.batch * s.k * s.n));
  for (T& x : a) x = static_cast<T>(value(rng));
  for (T& y : b) y = static_cast<T>(value(rng));
  a[0] = edge_a;
  b[0] = edge_b;
  const std::vector<T> want = reference(s, a, b);
  for (const int size : {1, 2, 3}) {
    k::ThreadTeam team(size);
    const k::TeamScope scope(&team);
    EXPECT_EQ(product(dtype, s, a, b), want) << what << ", team of " << size;
  }
}

TEST(IntegerProduct, SumsUnder2To24AreExactThroughFloat32) {
  // k · max|a| · max|b| = 64 · 2^9 · 2^9 = 2^24: the float32 path's edge, its sums exact.
  const k::MatmulShape s{.m = 96, .k = 64, .n = 80};
  expect_exact<int32_t>(DType::kInt32, s, -512, 512, -512, 512, "int32 at 2^24");
  // int8 sums wrap: 127 · 127 · 64 is past int8's range.
  expect_exact<int8_t>(DType::kInt8, s, 100, 127, 127, 127, "int8 wrapping");
  expect_exact<uint8_t>(DType::kUInt8, {.m = 40, .k = 200, .n = 33}, 0, 255, 255, 255, "uint8");
}

TEST(IntegerProduct, SumsJustPast2To24AreExactThroughFloat64) {
  // One product of 4097 · 4097 = 16785409, odd and past 2^24: float32 cannot hold it.
  const k::MatmulShape one{.m = 1, .k = 1, .n = 1};
  expect_exact<int32_t>(DType::kInt32, one, 4097, 4097, 4097, 4097, "4097^2");
  const k::MatmulShape s{.m = 70, .k = 300, .n = 90, .transpose_a = true};
  expect_exact<int32_t>(DType::kInt32, s, -(1 << 20), 1 << 20, 1 << 20, 1 << 20, "2^20 values");
  expect_exact<int16_t>(DType::kInt16, s, -32768, 32767, -32768, 32767, "int16 full range");
  expect_exact<uint32_t>(DType::kUInt32, {.batch = 3, .m = 20, .k = 50, .n = 30}, 0, 1 << 20,
                         1 << 20, 1 << 20, "uint32 batch");
}

TEST(IntegerProduct, SumsThatCouldPass2To53WrapInTheTypesOwnArithmetic) {
  // 2^31 · 2^31 · 16 = 2^66: past float64's exact integers; int32 and int64 products wrap.
  const k::MatmulShape s{.m = 33, .k = 16, .n = 20};
  expect_exact<int32_t>(DType::kInt32, s, INT32_MIN, INT32_MAX, INT32_MIN, INT32_MIN,
                        "int32 full range");
  expect_exact<int64_t>(DType::kInt64, s, -(int64_t{1} << 40), int64_t{1} << 40, int64_t{1} << 40,
                        int64_t{1} << 40, "int64 past 2^64");
  expect_exact<uint64_t>(DType::kUInt64, s, 0, int64_t{1} << 62, uint64_t{1} << 63,
                         uint64_t{1} << 63, "uint64 top bit");
}

}  // namespace
