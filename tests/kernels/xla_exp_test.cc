// kernels::xla_exp_avx2 and xla_exp_avx512 (kernels/xla_exp_avx2.h, xla_exp_avx512.h): eight
// and sixteen at a time, the same bits as the scalar xla_exp (xla_math.h, whose values are XLA's),
// over special values and a million random bit patterns (every exponent, subnormals, infinities,
// NaNs), with subnormals flushed and not.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "kernels/float_environment.h"
#include "kernels/xla_exp_avx2.h"
#include "kernels/xla_exp_avx512.h"
#include "kernels/xla_log_avx2.h"
#include "kernels/xla_math.h"

namespace {

namespace k = spmd::kernels;

std::vector<float> inputs() {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  std::vector<float> x = {0.0f,   -0.0f,   1.0f,  -1.0f,  kInf,   -kInf,   NAN,     -NAN,
                          88.7f,  88.8f,   88.9f, -87.8f, -87.9f, -104.0f, 1e-45f,  -1e-45f,
                          88.72f, -87.33f, 0.5f,  1e-38f, 127.0f, -127.0f, 3.4e38f, -3.4e38f};
  std::mt19937 bits(51);
  for (int i = 0; i < 1 << 20; ++i)
    x.push_back(std::bit_cast<float>(static_cast<uint32_t>(bits())));
  std::uniform_real_distribution<float> near(-90.0f, 90.0f);
  for (int i = 0; i < 1 << 18; ++i) x.push_back(near(bits));
  // log's and log1p's usual domains: around 1, and both sides of log1p's sqrt(2) - 1.
  std::uniform_real_distribution<float> around_one(-1.0f, 4.0f);
  for (int i = 0; i < 1 << 18; ++i) x.push_back(around_one(bits));
  // log1p's rational form alone (whole vectors of it, which skip the log: xla_log_avx2.cc).
  std::uniform_real_distribution<float> small(-0.41f, 0.41f);
  for (int i = 0; i < 1 << 16; ++i) x.push_back(small(bits));
  for (float v : {0.41421356f, -0.41421356f, 0.41421357f, -0.41421357f, -1.0f, -0.99999994f,
                  1.17549435e-38f, -1.17549435e-38f, 0.70710677f, 0.70710683f}) {
    x.push_back(v);
  }
  return x;
}

// One of the vector loops, and what the CPU lacks when it declines to run.
struct Loop {
  bool (*run)(const float*, float*, int64_t);
  const char* lacks;
  float (*scalar)(float) = k::xla_exp;  // the function it must equal
};

constexpr Loop kAvx2 = {k::xla_exp_avx2, "this CPU has no AVX2 and FMA: the loop cannot run here"};
constexpr Loop kAvx512 = {k::xla_exp_avx512, "this CPU has no AVX-512: the loop cannot run here"};
constexpr Loop kLogistic512 = {k::xla_logistic_avx512,
                               "this CPU has no AVX-512: the loop cannot run here",
                               [](float v) { return k::xla_logistic(v); }};
constexpr const char* kNoAvx2 = "this CPU has no AVX2 and FMA: the loop cannot run here";
constexpr Loop kLogistic2 = {k::xla_logistic_avx2, kNoAvx2,
                             [](float v) { return k::xla_logistic(v); }};
constexpr Loop kLog2 = {k::xla_log_avx2, kNoAvx2, [](float v) { return k::xla_log_of(v); }};
constexpr Loop kLog1p2 = {k::xla_log1p_avx2, kNoAvx2, [](float v) { return k::xla_log1p_of(v); }};

void expect_equal_to_scalar(const Loop& loop) {
  const std::vector<float> x = inputs();
  std::vector<float> y(x.size());
  if (!loop.run(x.data(), y.data(), static_cast<int64_t>(x.size()))) GTEST_SKIP() << loop.lacks;
  int differ = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const float want = loop.scalar(x[i]);
    const bool same = std::isnan(want)
                          ? std::isnan(y[i])
                          : std::bit_cast<uint32_t>(want) == std::bit_cast<uint32_t>(y[i]);
    if (!same && ++differ <= 5) {
      ADD_FAILURE() << "exp(" << x[i] << " = 0x" << std::hex << std::bit_cast<uint32_t>(x[i])
                    << "): " << y[i] << ", the scalar function " << want;
    }
  }
  EXPECT_EQ(differ, 0) << " of " << x.size();
}

// Every length up to 72 at every offset into a buffer: the double passes, the single one and
// the tail each meet every value, and nothing past n is written.
void expect_every_length_and_offset(const Loop& loop) {
  std::vector<float> x(88);
  for (size_t i = 0; i < x.size(); ++i) x[i] = -90.0f + 2.1f * static_cast<float>(i);
  for (int64_t offset = 0; offset < 16; ++offset) {
    for (int64_t n = 0; n <= 72; ++n) {
      std::vector<float> y(x.size(), -7.0f);
      if (!loop.run(x.data() + offset, y.data() + offset, n)) GTEST_SKIP() << loop.lacks;
      for (int64_t i = 0; i < static_cast<int64_t>(y.size()); ++i) {
        const bool inside = i >= offset && i < offset + n;
        const float want = inside ? loop.scalar(x[static_cast<size_t>(i)]) : -7.0f;
        ASSERT_EQ(std::bit_cast<uint32_t>(y[static_cast<size_t>(i)]), std::bit_cast<uint32_t>(want))
            << "n " << n << ", offset " << offset << ", element " << i;
      }
    }
  }
}

TEST(XlaExpAvx2, EqualsTheScalarFunctionEverywhere) { expect_equal_to_scalar(kAvx2); }

TEST(XlaExpAvx2, EveryLengthAndOffsetMatchesTheScalarFunctionAndStopsAtTheEnd) {
  expect_every_length_and_offset(kAvx2);
}

TEST(XlaExpAvx2, EqualsTheScalarFunctionWithSubnormalsFlushed) {
  const k::FlushSubnormalsScope flush;
  expect_equal_to_scalar(kAvx2);
}

TEST(XlaExpAvx512, EqualsTheScalarFunctionEverywhere) { expect_equal_to_scalar(kAvx512); }

TEST(XlaExpAvx512, EveryLengthAndOffsetMatchesTheScalarFunctionAndStopsAtTheEnd) {
  expect_every_length_and_offset(kAvx512);
}

TEST(XlaExpAvx512, EqualsTheScalarFunctionWithSubnormalsFlushed) {
  const k::FlushSubnormalsScope flush;
  expect_equal_to_scalar(kAvx512);
}

TEST(XlaLogisticAvx512, EqualsTheScalarFunctionEverywhere) { expect_equal_to_scalar(kLogistic512); }

TEST(XlaLogisticAvx512, EveryLengthAndOffsetMatchesTheScalarFunctionAndStopsAtTheEnd) {
  expect_every_length_and_offset(kLogistic512);
}

TEST(XlaLogisticAvx512, EqualsTheScalarFunctionWithSubnormalsFlushed) {
  const k::FlushSubnormalsScope flush;
  expect_equal_to_scalar(kLogistic512);
}

// The logistic, log and log1p loops of AVX2 machines (xla_exp_avx2.h, xla_log_avx2.h).
TEST(XlaLogisticAvx2, EqualsTheScalarFunctionEverywhere) { expect_equal_to_scalar(kLogistic2); }

TEST(XlaLogisticAvx2, EveryLengthAndOffsetMatchesTheScalarFunctionAndStopsAtTheEnd) {
  expect_every_length_and_offset(kLogistic2);
}

TEST(XlaLogAvx2, EqualsTheScalarFunctionEverywhere) {
  expect_equal_to_scalar(kLog2);
  expect_equal_to_scalar(kLog1p2);
}

TEST(XlaLogAvx2, EveryLengthAndOffsetMatchesTheScalarFunctionAndStopsAtTheEnd) {
  expect_every_length_and_offset(kLog2);
  expect_every_length_and_offset(kLog1p2);
}

TEST(XlaLogAvx2, EqualsTheScalarFunctionWithSubnormalsFlushed) {
  const k::FlushSubnormalsScope flush;
  expect_equal_to_scalar(kLogistic2);
  expect_equal_to_scalar(kLog2);
  expect_equal_to_scalar(kLog1p2);
}

}  // namespace
