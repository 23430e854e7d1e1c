// kernels::ynn_loops_avx2 and ynn_loops_avx512 (ynn_simd.h): each instruction set's exp, expm1,
// tanh, logistic, log, log1p, row sum and sum of exps give the bits of the scalar formulas
// (ynn_math.h; ynn_reduce.h: ynn_row_sum_portable) for every float32 class, with subnormals
// flushed and not, at every length around the tails, the groups of 64 and the Kahan steps. An
// instruction set this CPU lacks is skipped, saying so. That the scalar formulas are JAX's is
// tested against JAX (tests/python/jax_parity: test_random.py, test_numpy.py's sums of exps).
#include "kernels/ynn_simd.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "kernels/float_environment.h"
#include "kernels/half_convert.h"
#include "kernels/ynn_math.h"
#include "kernels/ynn_reduce.h"

namespace ynn_simd_test {

namespace k = spmd::kernels;
constexpr float kInf = std::numeric_limits<float>::infinity();

// The tests run once per instruction set (INSTANTIATE_TEST_SUITE_P below).
class YnnSimd : public testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    const std::string isa = GetParam();
    loops_ = isa == "avx512f" ? k::ynn_loops_avx512() : k::ynn_loops_avx2();
    if (loops_ == nullptr)
      GTEST_SKIP() << "this CPU has no " << isa << ": its loops cannot run here";
  }
  const k::YnnLoops& loops() const { return *loops_; }

 private:
  const k::YnnLoops* loops_ = nullptr;
};

// Equal bits, or both NaN.
bool same(float a, float b) {
  return std::bit_cast<uint32_t>(a) == std::bit_cast<uint32_t>(b) ||
         (std::isnan(a) && std::isnan(b));
}

// Floats of every class: random bit patterns (NaNs, infinities, subnormals, zeros of both signs
// among them) and values in exp's range, half and half.
std::vector<float> mixed_floats(size_t n, uint32_t seed) {
  std::mt19937 bits(seed);
  std::uniform_real_distribution<float> range(-90.0f, 90.0f);
  std::vector<float> x(n);
  for (size_t i = 0; i < n; ++i) {
    x[i] = i % 2 == 0 ? std::bit_cast<float>(static_cast<uint32_t>(bits())) : range(bits);
  }
  const float special[] = {0.0f,
                           -0.0f,
                           kInf,
                           -kInf,
                           NAN,
                           -NAN,
                           1e-40f,
                           -1e-40f,
                           88.72283935546875f,
                           -88.02969360351562f,
                           88.7f,
                           -87.5f};
  for (size_t i = 0; i < std::size(special) && i < n; ++i) x[i * 7 % n] = special[i];
  return x;
}

void expect_exp_equals_scalar(const k::YnnLoops& loops) {
  const std::vector<float> x = mixed_floats(size_t{1} << 18, 59);
  std::vector<float> y(x.size());
  ASSERT_TRUE(loops.unary(k::Unary::kExp, x.data(), y.data(), static_cast<int64_t>(x.size())));
  for (size_t i = 0; i < x.size(); ++i) {
    ASSERT_TRUE(same(y[i], k::ynn_exp(x[i])))
        << "exp(" << x[i] << " = 0x" << std::hex << std::bit_cast<uint32_t>(x[i]) << "): " << y[i]
        << ", the scalar formula " << k::ynn_exp(x[i]);
  }
}

TEST_P(YnnSimd, ExpEqualsTheScalarFormulaForEveryClassOfFloat) {
  expect_exp_equals_scalar(loops());
}

TEST_P(YnnSimd, ExpEqualsTheScalarFormulaWithSubnormalsFlushed) {
  const k::FlushSubnormalsScope flushed;
  expect_exp_equals_scalar(loops());
}

TEST_P(YnnSimd, ExpWritesEveryLengthAndNothingPastIt) {
  const std::vector<float> x = mixed_floats(80, 60);
  for (int64_t n = 0; n <= 70; ++n) {
    std::vector<float> y(static_cast<size_t>(n) + 16, -7.0f);
    ASSERT_TRUE(loops().unary(k::Unary::kExp, x.data(), y.data(), n));
    for (int64_t i = 0; i < n; ++i) ASSERT_TRUE(same(y[i], k::ynn_exp(x[i]))) << n << ", " << i;
    for (size_t i = static_cast<size_t>(n); i < y.size(); ++i) ASSERT_EQ(y[i], -7.0f) << n;
  }
}

// Each of loops.unary's functions against its scalar formula, over every class of float and
// every length from 0 to 70 (nothing written past n).
void expect_unary_equals_scalar(const k::YnnLoops& loops) {
  const std::pair<k::Unary, float (*)(float)> cases[] = {
      {k::Unary::kExp, k::ynn_exp},   {k::Unary::kExpm1, k::ynn_expm1},
      {k::Unary::kTanh, k::ynn_tanh}, {k::Unary::kLogistic, k::ynn_logistic},
      {k::Unary::kLog, k::ynn_log},   {k::Unary::kLog1p, k::ynn_log1p}};
  const std::vector<float> x = mixed_floats(size_t{1} << 16, 61);
  for (const auto& [op, f] : cases) {
    std::vector<float> y(x.size());
    ASSERT_TRUE(loops.unary(op, x.data(), y.data(), static_cast<int64_t>(x.size())));
    for (size_t i = 0; i < x.size(); ++i) {
      ASSERT_TRUE(same(y[i], f(x[i])))
          << k::name(op) << "(" << x[i] << " = 0x" << std::hex << std::bit_cast<uint32_t>(x[i])
          << "): " << y[i] << ", the scalar formula " << f(x[i]);
    }
    for (int64_t n = 0; n <= 70; ++n) {
      std::vector<float> z(static_cast<size_t>(n) + 16, -7.0f);
      ASSERT_TRUE(loops.unary(op, x.data(), z.data(), n));
      for (int64_t i = 0; i < n; ++i) ASSERT_TRUE(same(z[i], f(x[i]))) << k::name(op) << n;
      for (size_t i = static_cast<size_t>(n); i < z.size(); ++i) ASSERT_EQ(z[i], -7.0f) << n;
    }
  }
}

TEST_P(YnnSimd, Expm1TanhLogisticLogAndLog1pEqualTheScalarFormulas) {
  expect_unary_equals_scalar(loops());
}

TEST_P(YnnSimd, Expm1TanhLogisticLogAndLog1pEqualTheScalarFormulasWithSubnormalsFlushed) {
  const k::FlushSubnormalsScope flushed;
  expect_unary_equals_scalar(loops());
}

// The loops take exactly the functions ynn_has_own names: a chain's step resolved to YNNPACK's
// formula (ynn_reduce.h: ynn_unary) never falls to the scalar one for want of a loop, and a
// fused row sum (chain.cc: unary_sums) exists for each.
TEST_P(YnnSimd, TakesEveryFunctionYnnHasOwnNamesAndNoOther) {
  const float x[2] = {0.5f, 2.0f};
  for (int f = 0; f <= static_cast<int>(k::kLastUnary); ++f) {
    const auto op = static_cast<k::Unary>(f);
    float y[2] = {-7.0f, -7.0f};
    float sum = -7.0f;
    EXPECT_EQ(loops().unary(op, x, y, 2), k::ynn_has_own(op)) << k::name(op);
    EXPECT_EQ(loops().unary_row_sum(op, x, 2, &sum), k::ynn_has_own(op)) << k::name(op);
  }
}

TEST_P(YnnSimd, UnaryRefusesAFunctionItHasNoFormulaFor) {
  const float x = 1.0f;
  float y = -7.0f;
  EXPECT_FALSE(loops().unary(k::Unary::kSin, &x, &y, 1));
  EXPECT_EQ(y, -7.0f);
}

// Rows where the order shows: magnitudes from 2^-20 to 2^26 of both signs, so that sums taken in
// another order, or a Kahan step missed, round differently.
std::vector<float> cancelling_values(size_t n, uint32_t seed) {
  std::mt19937 bits(seed);
  std::uniform_real_distribution<float> mantissa(1.0f, 2.0f);
  std::uniform_int_distribution<int> exponent(-20, 26);
  std::vector<float> x(n);
  for (float& v : x) v = std::ldexp(mantissa(bits), exponent(bits)) * (bits() % 2 ? 1.0f : -1.0f);
  return x;
}

void expect_sums_equal_portable(const k::YnnLoops& loops, const std::vector<float>& x, int64_t n,
                                const char* what) {
  const float got = loops.row_sum(x.data(), n);
  const float want = k::ynn_row_sum_portable(x.data(), n);
  ASSERT_TRUE(same(got, want)) << what << ", " << n << " elements: " << got << ", portable "
                               << want;
}

TEST_P(YnnSimd, RowSumEqualsThePortableSumAtEveryLength) {
  const std::vector<float> x = cancelling_values(70'000, 61);
  for (int64_t n = 0; n <= 1300; ++n) expect_sums_equal_portable(loops(), x, n, "cancelling");
  for (int64_t n : {4095, 4096, 4097, 16384, 16385, 32768, 40000, 70000}) {
    expect_sums_equal_portable(loops(), x, n, "cancelling");
  }
}

TEST_P(YnnSimd, RowSumEqualsThePortableSumOverSpecialValues) {
  // Infinities of both signs (a NaN sum and a non-finite Kahan error), NaNs, signed zeros.
  for (uint32_t seed = 0; seed < 8; ++seed) {
    std::vector<float> x = cancelling_values(3000, 62 + seed);
    std::mt19937 bits(seed);
    for (int i = 0; i < 3; ++i) {
      const float special[] = {kInf, -kInf, NAN, -0.0f, 3e38f, -3e38f};
      x[bits() % x.size()] = special[(seed + static_cast<uint32_t>(i)) % std::size(special)];
    }
    for (int64_t n : {1, 17, 64, 300, 1100, 3000})
      expect_sums_equal_portable(loops(), x, n, "special");
  }
  const std::vector<float> zeros(100, -0.0f);
  EXPECT_FALSE(std::signbit(loops().row_sum(zeros.data(), 100)));  // from +0, as the portable sum
}

TEST_P(YnnSimd, SumOfExpsEqualsThePortableSumOfTheScalarExps) {
  std::vector<float> x = cancelling_values(20'000, 63);
  for (float& v : x) v = std::fmod(v, 60.0f);  // exps from 1e-26 to 1e26: the order shows
  x[5000] = NAN;
  x[9000] = kInf;
  x[9001] = -kInf;
  std::vector<float> e(x.size());
  for (size_t i = 0; i < x.size(); ++i) e[i] = k::ynn_exp(x[i]);
  for (int64_t n = 0; n <= 1100; ++n) {
    float got = 0.0f;
    ASSERT_TRUE(loops().unary_row_sum(k::Unary::kExp, x.data(), n, &got));
    ASSERT_TRUE(same(got, k::ynn_row_sum_portable(e.data(), n))) << n << " elements";
  }
  for (int64_t n : {4096, 5000, 9000, 9002, 20000}) {
    float got = 0.0f;
    ASSERT_TRUE(loops().unary_row_sum(k::Unary::kExp, x.data(), n, &got));
    ASSERT_TRUE(same(got, k::ynn_row_sum_portable(e.data(), n))) << n << " elements";
  }
}

TEST_P(YnnSimd, UnaryRowSumsEqualThePortableSumOfTheScalarValues) {
  const std::pair<k::Unary, float (*)(float)> cases[] = {
      {k::Unary::kExp, k::ynn_exp},   {k::Unary::kExpm1, k::ynn_expm1},
      {k::Unary::kTanh, k::ynn_tanh}, {k::Unary::kLogistic, k::ynn_logistic},
      {k::Unary::kLog, k::ynn_log},   {k::Unary::kLog1p, k::ynn_log1p}};
  std::vector<float> x = cancelling_values(20'000, 64);
  for (float& v : x) v = std::fmod(v, 60.0f);
  x[5000] = NAN;
  x[9000] = kInf;
  for (const auto& [op, f] : cases) {
    std::vector<float> y(x.size());
    for (size_t i = 0; i < x.size(); ++i) y[i] = f(x[i]);
    for (int64_t n :
         {0, 1, 15, 16, 17, 63, 64, 65, 255, 256, 257, 1023, 1025, 4096, 5000, 9001, 20000}) {
      float got = -7.0f;
      ASSERT_TRUE(loops().unary_row_sum(op, x.data(), n, &got));
      ASSERT_TRUE(same(got, k::ynn_row_sum_portable(y.data(), n))) << k::name(op) << ", " << n;
    }
  }
  float untouched = -7.0f;
  EXPECT_FALSE(loops().unary_row_sum(k::Unary::kSin, x.data(), 4, &untouched));
  EXPECT_EQ(untouched, -7.0f);
}

// Rows of float16 or bfloat16 bit patterns: values of both signs across the type's range, so that
// the order of the additions shows, with NaNs (quiet and signaling), infinities, subnormals and
// zeros of both signs among them.
std::vector<uint16_t> half_bits(spmd::DType dtype, size_t n, uint32_t seed) {
  std::mt19937 bits(seed);
  std::uniform_real_distribution<float> mantissa(1.0f, 2.0f);
  std::uniform_int_distribution<int> exponent(-20, dtype == spmd::DType::kFloat16 ? 10 : 26);
  std::vector<float> wide(n);
  for (float& v : wide)
    v = std::ldexp(mantissa(bits), exponent(bits)) * (bits() % 2 ? 1.0f : -1.0f);
  std::vector<uint16_t> h(n);
  k::narrow_half(dtype, wide.data(), reinterpret_cast<std::byte*>(h.data()),
                 static_cast<int64_t>(n));
  const bool bf16 = dtype == spmd::DType::kBFloat16;
  const uint16_t special[] = {
      0x8000,                                       // -0
      0x0001,                                       // the least subnormal
      bf16 ? uint16_t{0x807f} : uint16_t{0x83ff},   // the largest negative subnormal
      bf16 ? uint16_t{0x7f80} : uint16_t{0x7c00},   // inf
      bf16 ? uint16_t{0xff80} : uint16_t{0xfc00},   // -inf
      bf16 ? uint16_t{0x7fc1} : uint16_t{0x7e01},   // a quiet NaN with a payload
      bf16 ? uint16_t{0xff81} : uint16_t{0xfc01}};  // a signaling NaN, negative
  // Specials sparse enough that most rows' sums stay finite.
  for (size_t i = 0; i < n / 509; ++i) h[(i * 509 + 17) % n] = special[i % std::size(special)];
  return h;
}

void expect_half_sums_equal_widened(const k::YnnLoops& loops) {
  for (const spmd::DType dtype : {spmd::DType::kFloat16, spmd::DType::kBFloat16}) {
    const std::vector<uint16_t> h = half_bits(dtype, 20'000, 65);
    std::vector<float> wide(h.size());
    ASSERT_TRUE(k::widen_half_portable(dtype, reinterpret_cast<const std::byte*>(h.data()),
                                       wide.data(), static_cast<int64_t>(h.size())));
    std::vector<int64_t> lengths;
    for (int64_t n = 0; n <= 600; ++n) lengths.push_back(n);
    for (int64_t n : {1023, 1025, 4095, 4096, 4097, 16385, 20000}) lengths.push_back(n);
    for (const size_t start : {size_t{0}, size_t{17}}) {
      for (const int64_t n : lengths) {
        if (start + static_cast<size_t>(n) > h.size()) continue;
        const float got = loops.half_row_sum(dtype == spmd::DType::kBFloat16, h.data() + start, n);
        const float want = k::ynn_row_sum_portable(wide.data() + start, n);
        ASSERT_TRUE(same(got, want)) << spmd::dtype_name(dtype) << ", " << n << " elements from "
                                     << start << ": " << got << ", widened first " << want;
      }
    }
  }
}

TEST_P(YnnSimd, HalfRowSumsEqualWideningTheRowThenSummingIt) {
  expect_half_sums_equal_widened(loops());
}

TEST_P(YnnSimd, HalfRowSumsEqualWideningTheRowThenSummingItWithSubnormalsFlushed) {
  const k::FlushSubnormalsScope flushed;
  expect_half_sums_equal_widened(loops());
}

INSTANTIATE_TEST_SUITE_P(EachInstructionSet, YnnSimd, testing::Values("avx2", "avx512f"),
                         [](const testing::TestParamInfo<const char*>& info) {
                           return std::string(info.param);
                         });

TEST(YnnSimdDispatch, TakesTheWidestInstructionSetThisCpuHas) {
  const k::YnnLoops* widest = k::ynn_loops();
  if (k::ynn_loops_avx512() != nullptr) {
    EXPECT_EQ(widest, k::ynn_loops_avx512());
  } else {
    EXPECT_EQ(widest, k::ynn_loops_avx2());  // nullptr where neither
  }
}

}  // namespace ynn_simd_test
