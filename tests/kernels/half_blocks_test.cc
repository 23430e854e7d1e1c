// The half types' element-wise kernels (elementwise.cc: widened a block of 1,024 at a time on
// the stack) against their definition element by element: widen with spmd/dtype.h, compute in
// float32, round once. Lengths that cross block edges and end inside one, every operand a buffer
// or one element repeated, bool and integer results, and special values (NaN, ±inf, ±0, values
// that round to inf or to a subnormal).
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "kernels/elementwise.h"

namespace {

namespace k = spmd::kernels;
using k::Binary;
using k::Unary;
using spmd::DType;

uint16_t to_half(DType t, float f) {
  return t == DType::kFloat16 ? spmd::to_float16(f).bits : spmd::to_bfloat16(f).bits;
}

float from_half(DType t, uint16_t h) {
  return t == DType::kFloat16 ? spmd::to_float(spmd::float16{h})
                              : spmd::to_float(spmd::bfloat16{h});
}

// n halves of `t`: special values first, then normals of every scale.
std::vector<uint16_t> halves(DType t, int64_t n, uint32_t seed) {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> special = {
      0.0f, -0.0f, 1.0f, -2.5f, inf, -inf, std::numeric_limits<float>::quiet_NaN(),
      6e4f, 1e-6f, 3.0f};
  std::mt19937 bits(seed);
  std::normal_distribution<float> value(0.0f, 4.0f);
  std::vector<uint16_t> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    v[static_cast<size_t>(i)] =
        to_half(t, i < static_cast<int64_t>(special.size()) ? special[static_cast<size_t>(i)]
                                                            : value(bits));
  }
  return v;
}

k::Input operand(const std::vector<uint16_t>& v, int64_t elements) {
  return {reinterpret_cast<const std::byte*>(v.data()), elements};
}

float arithmetic(Binary op, float x, float y) {
  volatile float a = x, b = y;
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

// NaNs compare as NaNs (which NaN a kernel makes is not the definition's business).
void expect_same_half(DType t, uint16_t got, uint16_t want, const char* what, int64_t i) {
  if (std::isnan(from_half(t, want))) {
    EXPECT_TRUE(std::isnan(from_half(t, got))) << what << " element " << i;
  } else {
    ASSERT_EQ(got, want) << what << " element " << i << " of " << spmd::dtype_name(t);
  }
}

const int64_t kLengths[] = {1, 1023, 1024, 1025, 2500};

TEST(HalfBlocks, ArithmeticAndComparisonsAcrossBlocksAreTheFloat32OperationRoundedOnce) {
  for (DType t : {DType::kFloat16, DType::kBFloat16}) {
    for (int64_t n : kLengths) {
      const std::vector<uint16_t> a = halves(t, n, 1), b = halves(t, n, 2);
      for (int scalars = 0; scalars < 4; ++scalars) {  // bit 0: a is one element, bit 1: b is
        const bool a1 = (scalars & 1) != 0, b1 = (scalars & 2) != 0;
        const auto x = [&](int64_t i) { return from_half(t, a[a1 ? 0 : static_cast<size_t>(i)]); };
        const auto y = [&](int64_t i) { return from_half(t, b[b1 ? 0 : static_cast<size_t>(i)]); };
        for (Binary op : {Binary::kAdd, Binary::kSub, Binary::kMul, Binary::kDiv}) {
          std::vector<uint16_t> out(static_cast<size_t>(n) + 1, 0x1234);
          k::binary(op, t, operand(a, a1 ? 1 : n), operand(b, b1 ? 1 : n),
                    reinterpret_cast<std::byte*>(out.data()), n);
          for (int64_t i = 0; i < n; ++i) {
            expect_same_half(t, out[static_cast<size_t>(i)], to_half(t, arithmetic(op, x(i), y(i))),
                             k::name(op).data(), i);
          }
          EXPECT_EQ(out.back(), 0x1234) << "written past n = " << n;
        }
        std::vector<uint8_t> less(static_cast<size_t>(n) + 1, 7);
        k::binary(Binary::kLt, t, operand(a, a1 ? 1 : n), operand(b, b1 ? 1 : n),
                  reinterpret_cast<std::byte*>(less.data()), n);
        for (int64_t i = 0; i < n; ++i) {
          ASSERT_EQ(less[static_cast<size_t>(i)], x(i) < y(i) ? 1 : 0) << "lt element " << i;
        }
        EXPECT_EQ(less.back(), 7) << "written past n = " << n;
      }
    }
  }
}

TEST(HalfBlocks, UnaryOperationsAndConversionsAcrossBlocksAreElementByElement) {
  for (DType t : {DType::kFloat16, DType::kBFloat16}) {
    const DType other = t == DType::kFloat16 ? DType::kBFloat16 : DType::kFloat16;
    for (int64_t n : kLengths) {
      const std::vector<uint16_t> a = halves(t, n, 3);
      for (int64_t elements : {n, int64_t{1}}) {
        const auto x = [&](int64_t i) {
          return from_half(t, a[elements == 1 ? 0 : static_cast<size_t>(i)]);
        };
        std::vector<uint16_t> out(static_cast<size_t>(n) + 1, 0x1234);
        for (Unary op : {Unary::kNeg, Unary::kAbs, Unary::kSqrt}) {
          k::unary(op, t, operand(a, elements), reinterpret_cast<std::byte*>(out.data()), n);
          for (int64_t i = 0; i < n; ++i) {
            const float v = x(i);
            const float want = op == Unary::kNeg   ? -v
                               : op == Unary::kAbs ? std::fabs(v)
                                                   : std::sqrt(v);
            expect_same_half(t, out[static_cast<size_t>(i)], to_half(t, want), k::name(op).data(),
                             i);
          }
          EXPECT_EQ(out.back(), 0x1234) << "written past n = " << n;
        }
        // To the other half type (through float32, rounded once), to float32, and to int32
        // (truncated toward zero, saturating, NaN to 0).
        k::convert(t, other, operand(a, elements), reinterpret_cast<std::byte*>(out.data()), n);
        for (int64_t i = 0; i < n; ++i) {
          expect_same_half(other, out[static_cast<size_t>(i)], to_half(other, x(i)), "convert", i);
        }
        std::vector<float> wide(static_cast<size_t>(n));
        k::convert(t, DType::kFloat32, operand(a, elements),
                   reinterpret_cast<std::byte*>(wide.data()), n);
        std::vector<int32_t> ints(static_cast<size_t>(n));
        k::convert(t, DType::kInt32, operand(a, elements),
                   reinterpret_cast<std::byte*>(ints.data()), n);
        for (int64_t i = 0; i < n; ++i) {
          const float v = x(i);
          const auto at = static_cast<size_t>(i);
          ASSERT_EQ(std::bit_cast<uint32_t>(wide[at]), std::bit_cast<uint32_t>(v)) << i;
          const int32_t want = std::isnan(v)         ? 0
                               : v >= 2147483648.0f  ? std::numeric_limits<int32_t>::max()
                               : v <= -2147483648.0f ? std::numeric_limits<int32_t>::min()
                                                     : static_cast<int32_t>(v);
          ASSERT_EQ(ints[at], want) << "int32 of " << v;
        }
      }
    }
  }
}

}  // namespace
