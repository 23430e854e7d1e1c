#include "comm/reduce_kernels.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

namespace spmd {
namespace {

constexpr ReduceOp kOps[] = {ReduceOp::kSum, ReduceOp::kProd, ReduceOp::kMin, ReduceOp::kMax};

// Checks reduce_into for T against a reference computed in long double.
template <typename T>
void check_against_reference() {
  const std::vector<T> a = {T(3), T(0), T(7), T(2), T(1)};
  const std::vector<T> b = {T(5), T(4), T(1), T(2), T(6)};
  for (ReduceOp op : kOps) {
    std::vector<T> out = a;
    reduce_into(dtype_of<T>(), op, out.data(), b.data(), out.size());
    for (size_t i = 0; i < a.size(); ++i) {
      const long double x = a[i];
      const long double y = b[i];
      long double want = 0;
      switch (op) {
        case ReduceOp::kSum:
          want = x + y;
          break;
        case ReduceOp::kProd:
          want = x * y;
          break;
        case ReduceOp::kMin:
          want = std::min(x, y);
          break;
        case ReduceOp::kMax:
          want = std::max(x, y);
          break;
      }
      EXPECT_EQ(static_cast<long double>(out[i]), want)
          << dtype_name(dtype_of<T>()) << " " << reduce_op_name(op) << " at " << i;
    }
  }
}

TEST(ReduceKernels, EveryIntegerAndFloatTypeMatchesTheReference) {
  check_against_reference<int8_t>();
  check_against_reference<int16_t>();
  check_against_reference<int32_t>();
  check_against_reference<int64_t>();
  check_against_reference<uint8_t>();
  check_against_reference<uint16_t>();
  check_against_reference<uint32_t>();
  check_against_reference<uint64_t>();
  check_against_reference<float>();
  check_against_reference<double>();
}

TEST(ReduceKernels, IntegersWrapOnOverflow) {
  int32_t a = std::numeric_limits<int32_t>::max();
  const int32_t one = 1;
  reduce_into(DType::kInt32, ReduceOp::kSum, &a, &one, 1);
  EXPECT_EQ(a, std::numeric_limits<int32_t>::min());
  uint8_t b = 200;
  const uint8_t c = 100;
  reduce_into(DType::kUInt8, ReduceOp::kSum, &b, &c, 1);
  EXPECT_EQ(b, 44);
}

TEST(ReduceKernels, BoolsCombineLogically) {
  const std::vector<uint8_t> x = {0, 0, 1, 1};
  const std::vector<uint8_t> y = {0, 1, 0, 7};  // any non-zero byte is true
  const std::vector<std::vector<uint8_t>> want = {
      {0, 1, 1, 1}, {0, 0, 0, 1}, {0, 0, 0, 1}, {0, 1, 1, 1}};  // sum, prod, min, max
  for (int k = 0; k < 4; ++k) {
    std::vector<uint8_t> out = x;
    reduce_into(DType::kBool, kOps[k], out.data(), y.data(), out.size());
    EXPECT_EQ(out, want[k]) << reduce_op_name(kOps[k]);
  }
}

TEST(ReduceKernels, FloatMinAndMaxPropagateNan) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (ReduceOp op : {ReduceOp::kMin, ReduceOp::kMax}) {
    float a = 1.0f;
    reduce_into(DType::kFloat32, op, &a, &nan, 1);
    EXPECT_TRUE(std::isnan(a)) << reduce_op_name(op);
    float b = nan;
    const float two = 2.0f;
    reduce_into(DType::kFloat32, op, &b, &two, 1);
    EXPECT_TRUE(std::isnan(b)) << reduce_op_name(op);
  }
}

// pmax of +0 and -0 is +0 and pmin -0, whichever arrives first, as jnp.maximum/minimum; in
// float32, float64 and through the half types' float32 accumulator.
template <typename T>
T from_float(float x) {
  if constexpr (std::is_same_v<T, float16>) return to_float16(x);
  if constexpr (std::is_same_v<T, bfloat16>) return to_bfloat16(x);
  if constexpr (std::is_floating_point_v<T>) return T(x);
}

template <typename T>
bool sign_of(T x) {
  if constexpr (std::is_floating_point_v<T>) return std::signbit(x);
  if constexpr (!std::is_floating_point_v<T>) return std::signbit(to_float(x));
}

template <typename T>
void check_signed_zeros() {
  const DType dtype = dtype_of<T>();
  for (bool positive_first : {true, false}) {
    const T first = from_float<T>(positive_first ? 0.0f : -0.0f);
    const T second = from_float<T>(positive_first ? -0.0f : 0.0f);
    for (ReduceOp op : {ReduceOp::kMin, ReduceOp::kMax}) {
      T into = first, out = first;
      reduce_into(dtype, op, &into, &second, 1);
      reduce_to(dtype, op, &out, &first, &second, 1);
      for (T got : {into, out}) {
        EXPECT_EQ(sign_of(got), op == ReduceOp::kMin)
            << dtype_name(dtype) << " " << reduce_op_name(op)
            << (positive_first ? " of +0, -0" : " of -0, +0");
      }
    }
  }
}

TEST(ReduceKernels, ZerosOfBothSignsGivePlusZeroForMaxAndMinusZeroForMin) {
  check_signed_zeros<float>();
  check_signed_zeros<double>();
  check_signed_zeros<float16>();
  check_signed_zeros<bfloat16>();
}

TEST(ReduceKernels, HalfTypesCombineInFloat32AndRoundToNearestEven) {
  // 1 + 2^-8 is not a bfloat16; 1 + 2^-8 + 2^-8 = 1 + 2^-7 is.
  std::vector<bfloat16> acc = {to_bfloat16(1.0f)};
  const std::vector<bfloat16> tiny = {to_bfloat16(1.0f / 256)};
  reduce_into(DType::kBFloat16, ReduceOp::kSum, acc.data(), tiny.data(), 1);
  EXPECT_EQ(acc[0].bits, to_bfloat16(1.0f).bits);  // the tie rounded to even: 1.0
  std::vector<float16> h = {to_float16(2.0f)};
  const std::vector<float16> three = {to_float16(3.0f)};
  reduce_into(DType::kFloat16, ReduceOp::kProd, h.data(), three.data(), 1);
  EXPECT_EQ(to_float(h[0]), 6.0f);
}

TEST(ReduceKernels, AFloat32AccumulatorRoundsOnceInsteadOfAtEveryStep) {
  // Adding 2^-8 to 1.0 eight times: rounding each step keeps 1.0 (every sum is a tie that
  // rounds to even), while accumulating in float32 gives 1 + 2^-5, which bfloat16 holds exactly.
  const bfloat16 step = to_bfloat16(1.0f / 256);
  bfloat16 pairwise = to_bfloat16(1.0f);
  float acc = 0;
  widen_to_float32(DType::kBFloat16, &pairwise, &acc, 1);
  for (int i = 0; i < 8; ++i) {
    reduce_into(DType::kBFloat16, ReduceOp::kSum, &pairwise, &step, 1);
    reduce_into_float32(DType::kBFloat16, ReduceOp::kSum, &acc, &step, 1);
  }
  bfloat16 once;
  narrow_from_float32(DType::kBFloat16, &acc, &once, 1);
  EXPECT_EQ(to_float(pairwise), 1.0f);
  EXPECT_EQ(to_float(once), 1.0f + 8.0f / 256);
  float16 h;
  const float f = 1.5f;
  narrow_from_float32(DType::kFloat16, &f, &h, 1);
  float back = 0;
  widen_to_float32(DType::kFloat16, &h, &back, 1);
  EXPECT_EQ(back, 1.5f);
}

}  // namespace
}  // namespace spmd
