// kernels::ynn_fused_steps and ynn_supports (ynn_fusion.h): which steps of a chain feeding a
// YNNPACK reduction are inside XLA's fusion. That the values then are JAX's is tested against
// JAX itself (tests/python/jax_parity/test_numpy.py: sums of tanh, expm1, log1p and logistic,
// and of exps behind a select).
#include "kernels/ynn_fusion.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/ynn_math.h"

namespace ynn_fusion_test {

namespace k = spmd::kernels;
using spmd::DType;
using Kind = k::ChainStep::Kind;

k::ChainStep unary(k::Unary op, int32_t a, DType t = DType::kFloat32) {
  return {.kind = Kind::kUnary,
          .fn = static_cast<uint8_t>(op),
          .dtype = t,
          .result = t,
          .args = {a, 0, 0}};
}
k::ChainStep binary(k::Binary op, int32_t a, int32_t b, DType t = DType::kFloat32) {
  const DType result = k::is_comparison(op) ? DType::kBool : t;
  return {.kind = Kind::kBinary,
          .fn = static_cast<uint8_t>(op),
          .dtype = t,
          .result = result,
          .args = {a, b, 0}};
}
k::ChainStep select(int32_t c, int32_t a, int32_t b) {
  return {.kind = Kind::kSelect,
          .dtype = DType::kFloat32,
          .result = DType::kFloat32,
          .args = {c, a, b}};
}
k::ChainStep convert(DType from, DType to, int32_t a) {
  return {.kind = Kind::kConvert, .dtype = from, .result = to, .args = {a, 0, 0}};
}

constexpr int32_t kX = k::chain_input(0);
constexpr int32_t kZero = k::chain_input(1);
int32_t step(int s) { return k::chain_result(s); }

TEST(YnnFusion, EveryStepOfAChainYnnpackSupportsIsInside) {
  // sum(exp(a - 1) * 2): sub, exp, mul.
  const std::vector<k::ChainStep> steps = {binary(k::Binary::kSub, kX, kZero),
                                           unary(k::Unary::kExp, step(0)),
                                           binary(k::Binary::kMul, step(1), kZero)};
  EXPECT_EQ(k::ynn_fused_steps(steps), 0b111u);
}

TEST(YnnFusion, ASelectKeepsItselfAndWhatFeedsItOut) {
  // sum(where(a > 0, exp(a), 0) * 2): gt, exp, select, mul; only the product is inside.
  const std::vector<k::ChainStep> steps = {
      binary(k::Binary::kGt, kX, kZero), unary(k::Unary::kExp, kX), select(step(0), step(1), kZero),
      binary(k::Binary::kMul, step(2), kZero)};
  EXPECT_EQ(k::ynn_fused_steps(steps), 0b1000u);
}

TEST(YnnFusion, AStepReadByOneStepOutsideStaysOutside) {
  // e = exp(a); sum(where(e > 1, e, 0) + e): e is read by the comparison and the select, both
  // outside, and by the add, inside: e stays outside, as XLA's growth needs all of its users.
  const std::vector<k::ChainStep> steps = {
      unary(k::Unary::kExp, kX), binary(k::Binary::kGt, step(0), kZero),
      select(step(1), step(0), kZero), binary(k::Binary::kAdd, step(2), step(0))};
  EXPECT_EQ(k::ynn_fused_steps(steps), 0b1000u);
}

TEST(YnnFusion, AStepReadOnlyByStepsInsideIsInside) {
  // t = tanh(a); sum(t * t + t).
  const std::vector<k::ChainStep> steps = {unary(k::Unary::kTanh, kX),
                                           binary(k::Binary::kMul, step(0), step(0)),
                                           binary(k::Binary::kAdd, step(1), step(0))};
  EXPECT_EQ(k::ynn_fused_steps(steps), 0b111u);
}

TEST(YnnFusion, OperationsYnnpackLacksStopTheGrowth) {
  for (const k::Unary op : {k::Unary::kSin, k::Unary::kCos, k::Unary::kRound, k::Unary::kErfc,
                            k::Unary::kLgamma, k::Unary::kCbrt, k::Unary::kErfInv}) {
    const std::vector<k::ChainStep> steps = {unary(k::Unary::kExp, kX), unary(op, step(0))};
    EXPECT_EQ(k::ynn_fused_steps(steps), 0u) << k::name(op);
  }
  for (const k::Binary op : {k::Binary::kRem, k::Binary::kAtan2}) {
    const std::vector<k::ChainStep> steps = {unary(k::Unary::kExp, kX), binary(op, step(0), kZero)};
    EXPECT_EQ(k::ynn_fused_steps(steps), 0u) << k::name(op);
  }
}

TEST(YnnFusion, Float16AndWideIntegersAreNotYnnpacksTypes) {
  // exp of float16 widened for a float32 sum: the convert from float16 stops the growth.
  const std::vector<k::ChainStep> half = {unary(k::Unary::kExp, kX, DType::kFloat16),
                                          convert(DType::kFloat16, DType::kFloat32, step(0))};
  EXPECT_EQ(k::ynn_fused_steps(half), 0u);
  const std::vector<k::ChainStep> wide = {convert(DType::kInt32, DType::kFloat32, kX),
                                          unary(k::Unary::kExp, step(0))};
  EXPECT_EQ(k::ynn_fused_steps(wide), 0b10u);
  const std::vector<k::ChainStep> narrow = {convert(DType::kBFloat16, DType::kFloat32, kX),
                                            unary(k::Unary::kExp, step(0))};
  EXPECT_EQ(k::ynn_fused_steps(narrow), 0b11u);
}

TEST(YnnFusion, SixtyFourStepsEachHaveTheirBit) {
  std::vector<k::ChainStep> steps = {unary(k::Unary::kExp, kX)};
  for (int s = 1; s < k::kMaxChainSteps; ++s) steps.push_back(unary(k::Unary::kNeg, step(s - 1)));
  EXPECT_EQ(k::ynn_fused_steps(steps), ~uint64_t{0});
  steps.back() = unary(k::Unary::kSin, step(k::kMaxChainSteps - 2));
  EXPECT_EQ(k::ynn_fused_steps(steps), 0u);
}

// run_chain_reduce follows the marks: over 4,096 × 64 float32s, sum(where(a > 0, exp(a), 0) * 2)
// takes XLA's exp (run_chain's), sum(exp(a) * 2) YNNPACK's.
TEST(YnnFusion, AChainsSumTakesYnnpacksExpOnlyInsideTheFusion) {
  constexpr int64_t kRows = 64, kExtent = 4096, kN = kRows * kExtent;
  std::mt19937 bits(60);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  std::vector<float> a(static_cast<size_t>(kN));
  for (float& v : a) v = normal(bits);
  const float zero = 0.0f, two = 2.0f;
  const k::Input inputs[] = {{reinterpret_cast<const std::byte*>(a.data()), kN},
                             {reinterpret_cast<const std::byte*>(&zero), 1},
                             {reinterpret_cast<const std::byte*>(&two), 1}};
  const std::vector<k::ChainStep> behind_select = {
      binary(k::Binary::kGt, kX, kZero), unary(k::Unary::kExp, kX), select(step(0), step(1), kZero),
      binary(k::Binary::kMul, step(2), k::chain_input(2))};
  const std::vector<k::ChainStep> inside = {unary(k::Unary::kExp, kX),
                                            binary(k::Binary::kMul, step(0), k::chain_input(2))};
  // The sums of the values each step computes, as reduce() adds them.
  const auto sums_of = [&](const std::vector<float>& values) {
    std::vector<float> out(kRows);
    k::reduce(k::Reduce::kSum, DType::kFloat32, reinterpret_cast<const std::byte*>(values.data()),
              spmd::Shape{kRows, kExtent}, 1, DType::kFloat32,
              reinterpret_cast<std::byte*>(out.data()));
    return out;
  };
  std::vector<float> xla(a.size()), ynn(a.size());
  k::run_chain(behind_select, inputs, reinterpret_cast<std::byte*>(xla.data()), kN);
  for (size_t i = 0; i < a.size(); ++i) ynn[i] = k::ynn_exp(a[i]) * 2.0f;
  std::vector<float> got(kRows);
  k::run_chain_reduce(behind_select, inputs, kRows, kExtent, k::Reduce::kSum,
                      reinterpret_cast<std::byte*>(got.data()));
  EXPECT_EQ(got, sums_of(xla));
  k::run_chain_reduce(inside, inputs, kRows, kExtent, k::Reduce::kSum,
                      reinterpret_cast<std::byte*>(got.data()));
  EXPECT_EQ(got, sums_of(ynn));
  std::vector<float> positive_ynn(a.size());
  for (size_t i = 0; i < a.size(); ++i) positive_ynn[i] = a[i] > 0 ? ynn[i] : 0.0f;
  EXPECT_NE(sums_of(xla), sums_of(positive_ynn))
      << "the two exps agree here: the test shows nothing";
}

// nn.gelu's nine steps feeding a row sum, over 64 rows of 4,096 float32s (normal, signed zeros,
// subnormals, tanh's saturation; the last row also infinities, NaN and the extremes): its tanh is
// YNNPACK's, inside the register runs (register_run.h) where the CPU takes them, and the sums
// are those of each element's steps computed one by one with the scalar ynn_tanh, added as
// reduce() adds them.
TEST(YnnFusion, GelusSumTakesYnnpacksTanhWhereverTheChainRuns) {
  constexpr int64_t kRows = 64, kExtent = 4096, kN = kRows * kExtent;
  std::mt19937 bits(67);
  std::normal_distribution<float> normal(0.0f, 2.0f);
  const std::vector<float> special = {0.0f,  -0.0f, 1e-40f, -1e-40f, 1e-20f, 5.0f,
                                      -5.0f, 9.0f,  -9.5f,  30.0f,   -30.0f};
  const std::vector<float> extremes = {INFINITY, -INFINITY, NAN, 3e38f, -3e38f, 1e10f, -1e10f};
  std::vector<float> a(static_cast<size_t>(kN));
  for (size_t i = 0; i < a.size(); ++i) {
    a[i] = i % 7 == 3 ? special[i % special.size()] : normal(bits);
  }
  for (size_t i = 0; i < extremes.size(); ++i) a[a.size() - 1 - 9 * i] = extremes[i];
  const float c = 0.044715f, sqrt_2_pi = 0.7978845834732056f, one = 1.0f, half = 0.5f;
  const auto in = [](const float* p, int64_t n) {
    return k::Input{reinterpret_cast<const std::byte*>(p), n};
  };
  const k::Input inputs[] = {in(a.data(), kN), in(&c, 1), in(&sqrt_2_pi, 1), in(&one, 1),
                             in(&half, 1)};
  const std::vector<k::ChainStep> gelu = {
      binary(k::Binary::kMul, kX, kX),                      // 0: x²
      binary(k::Binary::kMul, step(0), kX),                 // 1: x³
      binary(k::Binary::kMul, k::chain_input(1), step(1)),  // 2: c x³
      binary(k::Binary::kAdd, kX, step(2)),                 // 3
      binary(k::Binary::kMul, step(3), k::chain_input(2)),  // 4
      unary(k::Unary::kTanh, step(4)),                      // 5
      binary(k::Binary::kAdd, step(5), k::chain_input(3)),  // 6
      binary(k::Binary::kMul, step(6), k::chain_input(4)),  // 7
      binary(k::Binary::kMul, kX, step(7))};                // 8
  std::vector<float> values(a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    const float x = a[i], x3 = x * x * x;
    volatile float inner = (x + c * x3) * sqrt_2_pi;  // each product and sum rounded on its own
    values[i] = x * ((k::ynn_tanh(inner) + one) * half);
  }
  std::vector<float> want(kRows), got(kRows);
  k::reduce(k::Reduce::kSum, DType::kFloat32, reinterpret_cast<const std::byte*>(values.data()),
            spmd::Shape{kRows, kExtent}, 1, DType::kFloat32,
            reinterpret_cast<std::byte*>(want.data()));
  k::run_chain_reduce(gelu, inputs, kRows, kExtent, k::Reduce::kSum,
                      reinterpret_cast<std::byte*>(got.data()));
  for (int64_t r = 0; r + 1 < kRows; ++r) {
    ASSERT_TRUE(std::isfinite(want[static_cast<size_t>(r)])) << "row " << r;
  }
  for (int64_t r = 0; r < kRows; ++r) {
    const auto i = static_cast<size_t>(r);
    EXPECT_TRUE(std::bit_cast<uint32_t>(got[i]) == std::bit_cast<uint32_t>(want[i]) ||
                (std::isnan(got[i]) && std::isnan(want[i])))
        << "row " << r << ": " << got[i] << " against " << want[i];
  }
}

}  // namespace ynn_fusion_test
