// kernels::float_arithmetic, float_comparison and float_unary (kernels/float_arithmetic.h) against
// the scalar expression element by element: each op of float32 and float64, every pair of special
// values (NaNs, signed zeros, infinities, subnormals, the extremes) and random values, every
// operand a buffer or one element repeated, every length through the vector bodies' tails, the
// result in an operand's own buffer, and with subnormals read as zero and not.
#include "kernels/float_arithmetic.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "kernels/float_environment.h"

namespace {

namespace k = spmd::kernels;
using k::Binary;
using spmd::DType;

template <class T>
k::Input operand(const std::vector<T>& v, int64_t elements) {
  return {reinterpret_cast<const std::byte*>(v.data()), elements};
}

// The operation on one pair, as scalar code computes it (volatile: one instruction on scalars,
// never the compiler's vector loop).
template <class F>
F scalar_arithmetic(Binary op, F x, F y) {
  volatile F a = x, b = y;
  switch (op) {
    case Binary::kAdd:
      return a + b;
    case Binary::kSub:
      return a - b;
    case Binary::kMul:
      return a * b;
    default:
      return a / b;
  }
}

template <class F>
bool scalar_comparison(Binary op, F x, F y) {
  volatile F a = x, b = y;
  switch (op) {
    case Binary::kEq:
      return a == b;
    case Binary::kNe:
      return a != b;
    case Binary::kLt:
      return a < b;
    case Binary::kLe:
      return a <= b;
    case Binary::kGt:
      return a > b;
    default:
      return a >= b;
  }
}

template <class F>
std::vector<F> float_specials() {
  using L = std::numeric_limits<F>;
  return {F(0),
          F(-0.0),
          F(1),
          F(-1),
          F(2.5),
          F(-3),
          F(1) / F(3),
          L::infinity(),
          -L::infinity(),
          L::min(),
          -L::min(),
          L::denorm_min(),
          L::min() / 3,
          L::max(),
          L::lowest(),
          L::epsilon(),
          L::quiet_NaN(),
          -L::quiet_NaN(),
          L::signaling_NaN()};
}

// Every ordered pair of special values, then random values of every magnitude.
template <class F>
void operands(std::vector<F>& x, std::vector<F>& y) {
  const std::vector<F> special = float_specials<F>();
  for (F a : special) {
    for (F b : special) {
      x.push_back(a);
      y.push_back(b);
    }
  }
  std::mt19937_64 bits(11);
  std::uniform_real_distribution<F> mantissa(-2, 2);
  std::uniform_int_distribution<int> exponent(-140, 120);
  for (int i = 0; i < 600; ++i) {
    x.push_back(std::ldexp(mantissa(bits), exponent(bits)));
    y.push_back(std::ldexp(mantissa(bits), exponent(bits)));
  }
}

// A NaN from two NaN operands may carry either's payload (the compiler may put either operand
// first, as XLA's may); every other result is the scalar expression's bits.
template <class F>
void expect_same(F got, F want, Binary op, F x, F y) {
  using U = std::conditional_t<sizeof(F) == 4, uint32_t, uint64_t>;
  if (std::isnan(x) && std::isnan(y)) {
    EXPECT_TRUE(std::isnan(got)) << k::name(op) << "(" << x << ", " << y << ")";
    return;
  }
  ASSERT_EQ(std::bit_cast<U>(got), std::bit_cast<U>(want))
      << k::name(op) << "(" << x << ", " << y << "): " << got << ", want " << want;
}

template <class F>
void expect_arithmetic(DType dtype) {
  std::vector<F> x, y;
  operands(x, y);
  const auto most = static_cast<int64_t>(x.size());
  for (Binary op : {Binary::kAdd, Binary::kSub, Binary::kMul, Binary::kDiv}) {
    for (int64_t n : {int64_t{0}, int64_t{1}, int64_t{7}, int64_t{9}, int64_t{17}, int64_t{33},
                      int64_t{70}, most}) {
      for (int scalars = 0; scalars < 4; ++scalars) {  // bit 0: x is one element, bit 1: y is
        const bool x1 = (scalars & 1) != 0, y1 = (scalars & 2) != 0;
        std::vector<F> out(static_cast<size_t>(n) + 1, F(7));
        ASSERT_TRUE(k::float_arithmetic(op, dtype, operand(x, x1 ? 1 : n), operand(y, y1 ? 1 : n),
                                        reinterpret_cast<std::byte*>(out.data()), n));
        for (int64_t i = 0; i < n; ++i) {
          const F a = x[x1 ? 0 : static_cast<size_t>(i)], b = y[y1 ? 0 : static_cast<size_t>(i)];
          expect_same(out[static_cast<size_t>(i)], scalar_arithmetic(op, a, b), op, a, b);
        }
        EXPECT_EQ(out[static_cast<size_t>(n)], F(7)) << "written past n = " << n;
      }
    }
    // The result written over the first operand.
    std::vector<F> in_place = x;
    ASSERT_TRUE(k::float_arithmetic(op, dtype, operand(in_place, most), operand(y, most),
                                    reinterpret_cast<std::byte*>(in_place.data()), most));
    for (size_t i = 0; i < x.size(); ++i) {
      expect_same(in_place[i], scalar_arithmetic(op, x[i], y[i]), op, x[i], y[i]);
    }
  }
}

template <class F>
void expect_comparisons(DType dtype) {
  std::vector<F> x, y;
  operands(x, y);
  const auto most = static_cast<int64_t>(x.size());
  for (Binary op : {Binary::kEq, Binary::kNe, Binary::kLt, Binary::kLe, Binary::kGt, Binary::kGe}) {
    for (int64_t n : {int64_t{0}, int64_t{5}, int64_t{33}, int64_t{65}, most}) {
      for (int scalars = 0; scalars < 4; ++scalars) {  // as in expect_arithmetic
        const bool x1 = (scalars & 1) != 0, y1 = (scalars & 2) != 0;
        std::vector<uint8_t> out(static_cast<size_t>(n) + 1, 7);
        ASSERT_TRUE(k::float_comparison(op, dtype, operand(x, x1 ? 1 : n), operand(y, y1 ? 1 : n),
                                        reinterpret_cast<std::byte*>(out.data()), n));
        for (int64_t i = 0; i < n; ++i) {
          const F a = x[x1 ? 0 : static_cast<size_t>(i)], b = y[y1 ? 0 : static_cast<size_t>(i)];
          ASSERT_EQ(out[static_cast<size_t>(i)], scalar_comparison(op, a, b) ? 1 : 0)
              << k::name(op) << "(" << a << ", " << b << ")";
        }
        EXPECT_EQ(out[static_cast<size_t>(n)], 7) << "written past n = " << n;
      }
    }
  }
}

// elementwise.h's definitions, one element at a time.
template <class F>
F scalar_unary(k::Unary op, F x) {
  volatile F v = x;
  switch (op) {
    case k::Unary::kNeg:
      return -v;
    case k::Unary::kAbs:
      return std::fabs(v);
    case k::Unary::kRelu:
      return v > F(0) ? v : std::isnan(v) ? v : F(0);
    case k::Unary::kFloor:
      return std::floor(v);
    case k::Unary::kCeil:
      return std::ceil(v);
    case k::Unary::kRoundEven:
      return std::nearbyint(v);
    default:
      return v > F(0) ? F(1) : v < F(0) ? F(-1) : v * F(0);
  }
}

template <class F>
void expect_unary(DType dtype) {
  using U = std::conditional_t<sizeof(F) == 4, uint32_t, uint64_t>;
  std::vector<F> x, y;
  operands(x, y);
  x.insert(x.end(), y.begin(), y.end());
  // Halves and their neighbours, for the roundings' ties.
  for (const F v : {F(0.5), F(-0.5), F(1.5), F(2.5), F(-2.5), std::nextafter(F(0.5), F(1)),
                    F(4503599627370497.0), F(8388609.0), F(-0.0)}) {
    x.push_back(v);
  }
  const auto most = static_cast<int64_t>(x.size());
  for (k::Unary op : {k::Unary::kNeg, k::Unary::kAbs, k::Unary::kRelu, k::Unary::kSign,
                      k::Unary::kFloor, k::Unary::kCeil, k::Unary::kRoundEven}) {
    for (int64_t n : {int64_t{0}, int64_t{3}, int64_t{17}, int64_t{66}, most}) {
      std::vector<F> out(static_cast<size_t>(n) + 1, F(7));
      ASSERT_TRUE(
          k::float_unary(op, dtype, operand(x, n), reinterpret_cast<std::byte*>(out.data()), n));
      // The roundings of a NaN are some NaN: the AVX2 build's vroundps quiets a signaling one,
      // where the C library's floor returns it as it is (XLA's code is the instruction).
      const bool rounding =
          op == k::Unary::kFloor || op == k::Unary::kCeil || op == k::Unary::kRoundEven;
      for (size_t i = 0; i < static_cast<size_t>(n); ++i) {
        if (rounding && std::isnan(x[i])) {
          ASSERT_TRUE(std::isnan(out[i])) << k::name(op) << "(" << x[i] << "): " << out[i];
          continue;
        }
        ASSERT_EQ(std::bit_cast<U>(out[i]), std::bit_cast<U>(scalar_unary(op, x[i])))
            << k::name(op) << "(" << x[i] << "): " << out[i];
      }
      EXPECT_EQ(out[static_cast<size_t>(n)], F(7)) << "written past n = " << n;
    }
    std::vector<F> one(5, F(9));  // a scalar operand, repeated
    ASSERT_TRUE(
        k::float_unary(op, dtype, operand(x, 1), reinterpret_cast<std::byte*>(one.data()), 5));
    for (F v : one) EXPECT_EQ(std::bit_cast<U>(v), std::bit_cast<U>(scalar_unary(op, x[0])));
  }
}

void expect_every_operation() {
  expect_arithmetic<float>(DType::kFloat32);
  expect_arithmetic<double>(DType::kFloat64);
  expect_comparisons<float>(DType::kFloat32);
  expect_comparisons<double>(DType::kFloat64);
  expect_unary<float>(DType::kFloat32);
  expect_unary<double>(DType::kFloat64);
}

TEST(FloatArithmetic, EachOperationIsTheScalarExpressionsBitsForEveryOperandForm) {
  expect_every_operation();
}

TEST(FloatArithmetic, SubnormalsAreReadAsZeroWhereTheThreadDoes) {
  const k::FlushSubnormalsScope flush;
  expect_every_operation();
  // Spelled out: a subnormal equals zero there, and a product that would be one is zero.
  const std::vector<float> tiny = {std::numeric_limits<float>::denorm_min()}, zero = {0.0F};
  std::vector<uint8_t> equal(1);
  ASSERT_TRUE(k::float_comparison(Binary::kEq, DType::kFloat32, operand(tiny, 1), operand(zero, 1),
                                  reinterpret_cast<std::byte*>(equal.data()), 1));
  EXPECT_EQ(equal[0], 1);
  const std::vector<float> smallest = {std::numeric_limits<float>::min()}, half = {0.5F};
  std::vector<float> product(1, 7.0F);
  ASSERT_TRUE(k::float_arithmetic(Binary::kMul, DType::kFloat32, operand(smallest, 1),
                                  operand(half, 1), reinterpret_cast<std::byte*>(product.data()),
                                  1));
  EXPECT_EQ(std::bit_cast<uint32_t>(product[0]), 0U) << "min() * 0.5 is flushed to +0";
}

TEST(FloatArithmetic, OtherOperationsAndDtypesAreDeclined) {
  const std::vector<float> f = {1.0F};
  const std::vector<int32_t> i = {1};
  std::vector<float> out(1, 5.0F);
  auto* o = reinterpret_cast<std::byte*>(out.data());
  EXPECT_FALSE(
      k::float_arithmetic(Binary::kPow, DType::kFloat32, operand(f, 1), operand(f, 1), o, 1));
  EXPECT_FALSE(
      k::float_arithmetic(Binary::kEq, DType::kFloat32, operand(f, 1), operand(f, 1), o, 1));
  EXPECT_FALSE(
      k::float_arithmetic(Binary::kAdd, DType::kInt32, operand(i, 1), operand(i, 1), o, 1));
  EXPECT_FALSE(
      k::float_comparison(Binary::kAdd, DType::kFloat32, operand(f, 1), operand(f, 1), o, 1));
  EXPECT_FALSE(
      k::float_comparison(Binary::kLt, DType::kFloat16, operand(f, 1), operand(f, 1), o, 1));
  EXPECT_FALSE(k::float_unary(k::Unary::kExp, DType::kFloat32, operand(f, 1), o, 1));
  EXPECT_FALSE(k::float_unary(k::Unary::kNeg, DType::kInt32, operand(i, 1), o, 1));
  EXPECT_EQ(out[0], 5.0F);
}

}  // namespace
