// kernels::integer_arithmetic (kernels/integer_arithmetic.h) against the operation on one pair at
// a time, computed modulo 2^bits from the values' own arithmetic: every integer dtype, add, sub,
// mul, max and min, the type's extremes (where sums and products wrap) among random values, each
// operand a buffer or one element repeated, every length through the vector bodies' tails, and
// the result written into an operand's own buffer.
#include "kernels/integer_arithmetic.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace {

namespace k = spmd::kernels;
using k::Binary;
using spmd::DType;

// op on one pair: the exact result in 128 bits (or as the larger of the two), reduced modulo
// 2^bits by the conversion to T (two's complement, as C++20 defines it).
template <class T>
T one_pair(Binary op, T x, T y) {
  // The values themselves, an int8's sign included.
  const auto a = static_cast<__int128>(x);  // NOLINT(bugprone-signed-char-misuse)
  const auto b = static_cast<__int128>(y);  // NOLINT(bugprone-signed-char-misuse)
  switch (op) {
    case Binary::kAdd:
      return static_cast<T>(static_cast<unsigned __int128>(a + b));
    case Binary::kSub:
      return static_cast<T>(static_cast<unsigned __int128>(a - b));
    case Binary::kMul:
      return static_cast<T>(static_cast<unsigned __int128>(a) * static_cast<unsigned __int128>(b));
    case Binary::kMax:
      return x < y ? y : x;
    default:
      return y < x ? y : x;
  }
}

template <class T>
std::vector<T> values(size_t n, uint32_t seed) {
  std::mt19937_64 bits(seed);
  std::vector<T> v(n);
  for (T& x : v) x = static_cast<T>(bits());
  const T special[] = {std::numeric_limits<T>::min(), std::numeric_limits<T>::max(), T(0), T(1),
                       static_cast<T>(-1)};
  for (size_t i = 0; i < n; i += 7) v[i] = special[(i / 7) % std::size(special)];
  return v;
}

template <class T>
void expect_each_op_is_the_pairs(DType dtype) {
  const Binary ops[] = {Binary::kAdd, Binary::kSub, Binary::kMul, Binary::kMax, Binary::kMin};
  for (const int64_t n : {int64_t{1}, int64_t{7}, int64_t{31}, int64_t{64}, int64_t{100},
                          int64_t{1000}, int64_t{4099}}) {
    const std::vector<T> x = values<T>(static_cast<size_t>(n), 11),
                         y = values<T>(static_cast<size_t>(n), 23);
    for (const Binary op : ops) {
      for (const int form : {0, 1, 2, 3}) {  // y repeated, x repeated, both, the result in x
        const int64_t xs = form == 1 ? 1 : n, ys = form == 0 ? 1 : n;
        std::vector<T> out(static_cast<size_t>(n));
        std::vector<T> in_place = x;
        T* target = form == 3 ? in_place.data() : out.data();
        const k::Input a{reinterpret_cast<const std::byte*>(form == 3 ? in_place.data() : x.data()),
                         xs};
        const k::Input b{reinterpret_cast<const std::byte*>(y.data()), ys};
        ASSERT_TRUE(
            k::integer_arithmetic(op, dtype, a, b, reinterpret_cast<std::byte*>(target), n));
        for (int64_t i = 0; i < n; ++i) {
          const T want = one_pair<T>(op, x[static_cast<size_t>(xs == 1 ? 0 : i)],
                                     y[static_cast<size_t>(ys == 1 ? 0 : i)]);
          ASSERT_EQ(target[i], want) << spmd::dtype_name(dtype) << " " << k::name(op) << ", form "
                                     << form << ", element " << i << " of " << n;
        }
      }
    }
  }
}

template <class T>
bool compare(Binary op, T x, T y) {
  switch (op) {
    case Binary::kEq:
      return x == y;
    case Binary::kNe:
      return x != y;
    case Binary::kLt:
      return x < y;
    case Binary::kLe:
      return x <= y;
    case Binary::kGt:
      return x > y;
    default:
      return x >= y;
  }
}

template <class T>
void expect_each_comparison_is_the_pairs(DType dtype) {
  const Binary ops[] = {Binary::kEq, Binary::kNe, Binary::kLt,
                        Binary::kLe, Binary::kGt, Binary::kGe};
  for (const int64_t n : {int64_t{1}, int64_t{33}, int64_t{1000}}) {
    std::vector<T> x = values<T>(static_cast<size_t>(n), 5),
                   y = values<T>(static_cast<size_t>(n), 9);
    for (int64_t i = 0; i < n; i += 3) y[static_cast<size_t>(i)] = x[static_cast<size_t>(i)];
    for (const Binary op : ops) {
      for (const int64_t ys : {int64_t{1}, n}) {
        std::vector<uint8_t> out(static_cast<size_t>(n), 7);
        ASSERT_TRUE(k::integer_comparison(op, dtype,
                                          {reinterpret_cast<const std::byte*>(x.data()), n},
                                          {reinterpret_cast<const std::byte*>(y.data()), ys},
                                          reinterpret_cast<std::byte*>(out.data()), n));
        for (int64_t i = 0; i < n; ++i) {
          const bool want =
              compare<T>(op, x[static_cast<size_t>(i)], y[static_cast<size_t>(ys == 1 ? 0 : i)]);
          ASSERT_EQ(out[static_cast<size_t>(i)], want ? 1 : 0)
              << spmd::dtype_name(dtype) << " " << k::name(op) << ", element " << i;
        }
      }
    }
  }
}

TEST(IntegerArithmetic, EveryComparisonOfEveryIntegerTypeIsTheOneOnEachPair) {
  expect_each_comparison_is_the_pairs<int8_t>(DType::kInt8);
  expect_each_comparison_is_the_pairs<int16_t>(DType::kInt16);
  expect_each_comparison_is_the_pairs<int32_t>(DType::kInt32);
  expect_each_comparison_is_the_pairs<int64_t>(DType::kInt64);
  expect_each_comparison_is_the_pairs<uint8_t>(DType::kUInt8);
  expect_each_comparison_is_the_pairs<uint16_t>(DType::kUInt16);
  expect_each_comparison_is_the_pairs<uint32_t>(DType::kUInt32);
  expect_each_comparison_is_the_pairs<uint64_t>(DType::kUInt64);
}

TEST(IntegerArithmetic, EveryOpOfEveryIntegerTypeIsTheOperationOnEachPairWrapped) {
  expect_each_op_is_the_pairs<int8_t>(DType::kInt8);
  expect_each_op_is_the_pairs<int16_t>(DType::kInt16);
  expect_each_op_is_the_pairs<int32_t>(DType::kInt32);
  expect_each_op_is_the_pairs<int64_t>(DType::kInt64);
  expect_each_op_is_the_pairs<uint8_t>(DType::kUInt8);
  expect_each_op_is_the_pairs<uint16_t>(DType::kUInt16);
  expect_each_op_is_the_pairs<uint32_t>(DType::kUInt32);
  expect_each_op_is_the_pairs<uint64_t>(DType::kUInt64);
}

TEST(IntegerArithmetic, RefusesOtherOpsAndTypesWritingNothing) {
  std::vector<int32_t> x(4, 3), out(4, -7);
  const k::Input a{reinterpret_cast<const std::byte*>(x.data()), 4};
  EXPECT_FALSE(k::integer_arithmetic(Binary::kDiv, DType::kInt32, a, a,
                                     reinterpret_cast<std::byte*>(out.data()), 4));
  EXPECT_FALSE(k::integer_arithmetic(Binary::kAdd, DType::kFloat32, a, a,
                                     reinterpret_cast<std::byte*>(out.data()), 4));
  EXPECT_FALSE(k::integer_arithmetic(Binary::kAdd, DType::kBool, a, a,
                                     reinterpret_cast<std::byte*>(out.data()), 4));
  EXPECT_EQ(out, std::vector<int32_t>(4, -7));
}

}  // namespace
