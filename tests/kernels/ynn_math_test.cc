// kernels::ynn_exp, ynn_log, ynn_expm1, ynn_log1p, ynn_tanh and ynn_logistic (ynn_math.h),
// ynn_unary and ynn_row_sum (ynn_reduce.h): their special values, their accuracy against the
// double-precision functions, subnormals read as zero under the kernels' float mode and not outside
// it, and the sum's order (every element counted once, lanes sixteen apart added first, Kahan's
// compensation). That they are JAX's bits is tested against JAX itself
// (tests/python/jax_parity/test_random.py: dirichlet and ball from 4,096 values; test_numpy.py:
// each function inside a "__ynn_fusion", over every class of float32).
#include "kernels/ynn_math.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <utility>
#include <vector>

#include "kernels/float_environment.h"
#include "kernels/ynn_reduce.h"

namespace {

namespace k = spmd::kernels;
constexpr float kInf = std::numeric_limits<float>::infinity();

// How many float32s apart a and b are (both finite, same sign).
int64_t ulps(float a, float b) {
  return std::abs(int64_t{std::bit_cast<int32_t>(a)} - int64_t{std::bit_cast<int32_t>(b)});
}

TEST(YnnMath, ExpIsWithinTwoUlpsOfTheRoundedExpOverItsRange) {
  std::mt19937 bits(44);
  std::uniform_real_distribution<float> range(-87.0f, 88.0f);
  int64_t worst = 0;
  for (int i = 0; i < 1 << 20; ++i) {
    const float x = range(bits);
    worst = std::max(worst, ulps(k::ynn_exp(x), static_cast<float>(std::exp(double{x}))));
  }
  EXPECT_LE(worst, 2);
}

TEST(YnnMath, ExpOfSpecialValues) {
  EXPECT_EQ(k::ynn_exp(0.0f), 1.0f);
  EXPECT_EQ(k::ynn_exp(-0.0f), 1.0f);
  EXPECT_EQ(k::ynn_exp(kInf), kInf);
  EXPECT_EQ(k::ynn_exp(-kInf), 0.0f);
  EXPECT_EQ(k::ynn_exp(-100.0f), 0.0f);  // clamped: 2^-127 is +0
  EXPECT_EQ(k::ynn_exp(100.0f), kInf);
  EXPECT_TRUE(std::isnan(k::ynn_exp(NAN)));
}

TEST(YnnMath, LogIsWithinTwoUlpsOfTheRoundedLogOverNormalFloats) {
  std::mt19937 bits(45);
  int64_t worst = 0;
  for (int i = 0; i < 1 << 20; ++i) {
    // Positive normal floats of every exponent.
    const auto b = static_cast<uint32_t>(bits()) & 0x7fffffffu;
    const float x = std::bit_cast<float>(b);
    if (!std::isnormal(x)) continue;
    const auto want = static_cast<float>(std::log(double{x}));
    if (want == 0.0f) continue;
    worst = std::max(worst, ulps(k::ynn_log(x), want));
  }
  EXPECT_LE(worst, 2);
}

TEST(YnnMath, LogOfSpecialValues) {
  EXPECT_EQ(k::ynn_log(1.0f), 0.0f);
  EXPECT_EQ(k::ynn_log(0.0f), -kInf);
  EXPECT_EQ(k::ynn_log(kInf), kInf);
  EXPECT_TRUE(std::isnan(k::ynn_log(-1.0f)));
  EXPECT_TRUE(std::isnan(k::ynn_log(-kInf)));
  EXPECT_TRUE(std::isnan(k::ynn_log(NAN)));
}

TEST(YnnMath, ASubnormalLogIsMinusInfinityWhereTheKernelsReadSubnormalsAsZero) {
  // Read at run time: a constant would be folded by the compiler, outside any float mode.
  volatile float opaque = 1e-40f;
  const float kSubnormal = opaque;
  EXPECT_TRUE(std::isfinite(k::ynn_log(kSubnormal)));  // the default mode: its own exponent
  const k::FlushSubnormalsScope flushed;
  if (!k::subnormals_read_as_zero()) GTEST_SKIP() << "this CPU has no DAZ control";
  EXPECT_EQ(k::ynn_log(kSubnormal), -kInf);
}

// The worst distance in ulps of f from the correctly rounded `exact` over 2^20 uniform x in
// [lo, hi] (where the rounded value is not zero).
template <class F, class G>
int64_t ynn_worst_ulps(F f, G exact, float lo, float hi, unsigned seed) {
  std::mt19937 bits(seed);
  std::uniform_real_distribution<float> range(lo, hi);
  int64_t worst = 0;
  for (int i = 0; i < 1 << 20; ++i) {
    const float x = range(bits);
    const auto want = static_cast<float>(exact(double{x}));
    if (want != 0.0f) worst = std::max(worst, ulps(f(x), want));
  }
  return worst;
}

TEST(YnnMath, Expm1Log1pTanhAndLogisticAreWithinThreeUlps) {
  const auto expm1 = [](double x) { return std::expm1(x); };
  const auto log1p = [](double x) { return std::log1p(x); };
  const auto tanh = [](double x) { return std::tanh(x); };
  const auto logistic = [](double x) { return 1.0 / (1.0 + std::exp(-x)); };
  EXPECT_LE(ynn_worst_ulps(k::ynn_expm1, expm1, -88.0f, 88.0f, 47), 2);
  EXPECT_LE(ynn_worst_ulps(k::ynn_expm1, expm1, -1e-3f, 1e-3f, 48), 2);  // no cancellation near 0
  EXPECT_LE(ynn_worst_ulps(k::ynn_log1p, log1p, -0.999f, 1e6f, 49), 3);
  EXPECT_LE(ynn_worst_ulps(k::ynn_log1p, log1p, -1e-3f, 1e-3f, 50), 3);  // r = x kept whole
  EXPECT_LE(ynn_worst_ulps(k::ynn_tanh, tanh, -10.0f, 10.0f, 51), 2);
  EXPECT_LE(ynn_worst_ulps(k::ynn_tanh, tanh, -1e-3f, 1e-3f, 52), 2);
  EXPECT_LE(ynn_worst_ulps(k::ynn_logistic, logistic, -80.0f, 80.0f, 53), 2);
}

TEST(YnnMath, Expm1Log1pTanhAndLogisticOfSpecialValues) {
  EXPECT_EQ(std::bit_cast<uint32_t>(k::ynn_expm1(-0.0f)), 0u);  // +0, as JAX's YNNPACK gives
  EXPECT_EQ(k::ynn_expm1(-kInf), -1.0f);
  EXPECT_EQ(k::ynn_expm1(-100.0f), -1.0f);
  EXPECT_EQ(k::ynn_expm1(kInf), kInf);
  EXPECT_EQ(k::ynn_expm1(88.7f), kInf);  // 2^128 on the way: inf, as ynn_exp(88.7)
  EXPECT_TRUE(std::isnan(k::ynn_expm1(NAN)));
  EXPECT_EQ(k::ynn_log1p(0.0f), 0.0f);
  EXPECT_EQ(k::ynn_log1p(-1.0f), -kInf);
  EXPECT_EQ(k::ynn_log1p(kInf), kInf);
  EXPECT_TRUE(std::isnan(k::ynn_log1p(-2.0f)));
  EXPECT_TRUE(std::isnan(k::ynn_log1p(NAN)));
  EXPECT_EQ(std::bit_cast<uint32_t>(k::ynn_tanh(-0.0f)), 0u);
  EXPECT_EQ(k::ynn_tanh(kInf), 1.0f);  // clamped: e / (e + 2), not inf / inf
  EXPECT_EQ(k::ynn_tanh(50.0f), 1.0f);
  EXPECT_EQ(k::ynn_tanh(-kInf), -1.0f);
  EXPECT_TRUE(std::isnan(k::ynn_tanh(NAN)));
  EXPECT_EQ(k::ynn_logistic(0.0f), 0.5f);
  EXPECT_EQ(k::ynn_logistic(kInf), 1.0f);
  EXPECT_EQ(k::ynn_logistic(-kInf), 0.0f);
  EXPECT_TRUE(std::isnan(k::ynn_logistic(NAN)));
}

TEST(YnnUnary, EachFunctionOverAnArrayOrAScalarIsTheScalarFormula) {
  const std::vector<float> x = {-3.0f, -0.25f, 0.0f, 1e-4f, 0.5f, 2.0f, 30.0f};
  const auto n = static_cast<int64_t>(x.size());
  const std::vector<std::pair<k::Unary, float (*)(float)>> cases = {
      {k::Unary::kExp, k::ynn_exp},     {k::Unary::kLog, k::ynn_log},
      {k::Unary::kExpm1, k::ynn_expm1}, {k::Unary::kLog1p, k::ynn_log1p},
      {k::Unary::kTanh, k::ynn_tanh},   {k::Unary::kLogistic, k::ynn_logistic}};
  for (const auto& [op, f] : cases) {
    ASSERT_TRUE(k::ynn_has_own(op)) << k::name(op);
    std::vector<float> y(x.size());
    const auto* in = reinterpret_cast<const std::byte*>(x.data());
    k::ynn_unary(op, spmd::DType::kFloat32, {in, n}, reinterpret_cast<std::byte*>(y.data()), n);
    for (size_t i = 0; i < x.size(); ++i) {
      EXPECT_EQ(std::bit_cast<uint32_t>(y[i]), std::bit_cast<uint32_t>(f(x[i])))
          << k::name(op) << "(" << x[i] << ")";
    }
    k::ynn_unary(op, spmd::DType::kFloat32, {in + 4 * sizeof(float), 1},
                 reinterpret_cast<std::byte*>(y.data()), n);
    for (const float v : y) EXPECT_EQ(std::bit_cast<uint32_t>(v), std::bit_cast<uint32_t>(f(x[4])));
  }
}

TEST(YnnUnary, RefusesAFunctionYnnpackHasNoFormulaOfItsOwnFor) {
  EXPECT_FALSE(k::ynn_has_own(k::Unary::kErf));   // YNNPACK's erf: not yet found
  EXPECT_FALSE(k::ynn_has_own(k::Unary::kSqrt));  // correctly rounded everywhere
  const float x = 1.0f;
  float y = 0.0f;
  EXPECT_THROW(k::ynn_unary(k::Unary::kSin, spmd::DType::kFloat32,
                            {reinterpret_cast<const std::byte*>(&x), 1},
                            reinterpret_cast<std::byte*>(&y), 1),
               spmd::InvalidArgument);
}

TEST(YnnRowSum, CountsEveryElementOnceAtEveryLength) {
  std::mt19937 bits(46);
  std::uniform_int_distribution<int> small(0, 3);
  for (int64_t n : {0, 1, 4, 15, 16, 17, 63, 64, 65, 255, 256, 257, 1023, 1024, 1025, 5000}) {
    std::vector<float> x(static_cast<size_t>(n));
    double exact = 0;
    for (float& v : x) {
      v = static_cast<float>(small(bits));
      exact += v;
    }
    EXPECT_EQ(k::ynn_row_sum(x.data(), n), static_cast<float>(exact)) << n << " elements";
  }
}

TEST(YnnRowSum, AddsLanesEightApartBeforeNeighbours) {
  // (1e8 + -1e8) + (1 + 1): lanes 0 and 2, then 1 and 3. In order it would be 1 (1e8 + 1 is 1e8).
  const float x[] = {1e8f, 1.0f, -1e8f, 1.0f};
  EXPECT_EQ(k::ynn_row_sum(x, 4), 2.0f);
  // Sixteen apart within a group: element 0 and element 16 share lane 0.
  std::vector<float> y(17, 0.0f);
  y[0] = 1e8f;
  y[1] = 1.0f;
  y[16] = -1e8f;
  EXPECT_EQ(k::ynn_row_sum(y.data(), 17), 1.0f);
}

TEST(YnnRowSum, CompensatesWhatTheThirdAccumulatorLoses) {
  // Lane 0 reaches the third accumulator every 1,024 elements: 2^24 first, then 1 each time.
  // Alone, each 1 is half an ulp of 2^24 and rounds away (to even); Kahan's error carries it.
  std::vector<float> x(size_t{1024} * 17, 0.0f);
  x[0] = 16777216.0f;
  for (size_t j = 1; j <= 16; ++j) x[1024 * j] = 1.0f;
  EXPECT_EQ(k::ynn_row_sum(x.data(), static_cast<int64_t>(x.size())), 16777216.0f + 16.0f);
}

TEST(YnnSoftmaxRows, EachRowSumsToAboutOneAndKeepsItsOrder) {
  const float x[] = {0.0f, 1.0f, 2.0f, -3.0f, -3.0f, -3.0f};
  float out[6];
  k::ynn_softmax_rows(x, 2, 3, out);
  EXPECT_NEAR(out[0] + out[1] + out[2], 1.0f, 1e-6f);
  EXPECT_LT(out[0], out[1]);
  EXPECT_LT(out[1], out[2]);
  EXPECT_EQ(out[3], out[4]);
  EXPECT_NEAR(out[3] * 3.0f, 1.0f, 1e-6f);
}

TEST(YnnPowerSumRows, SumsPowersOfMagnitudes) {
  const float g[] = {3.0f, -4.0f, 1.0f, -1.0f};
  const float p = 2.0f;
  float out[2];
  k::ynn_power_sum_rows(g, 2, 2, p, out);
  EXPECT_EQ(out[0], 25.0f);
  EXPECT_EQ(out[1], 2.0f);
}

}  // namespace
