// kernels::ynn_short_row_sums (ynn_reduce.h): many rows of 1 to 16 float32s summed a pass (those
// of 5 to 7 and 9 to 15 padded with +0 to 8 or 16) give each row's ynn_row_sum, over values where
// the order shows and over every special value (signed zeros, infinities of both signs, NaNs, the
// largest floats); other lengths are declined with nothing written. That ynn_row_sum is JAX's order
// is tested against JAX (tests/python/jax_parity/test_numpy.py).
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "kernels/ynn_reduce.h"

namespace {

namespace k = spmd::kernels;

// Equal bits, or both NaN (which NaN an addition of two keeps is the instruction's choice).
bool same(float a, float b) {
  return std::bit_cast<uint32_t>(a) == std::bit_cast<uint32_t>(b) ||
         (std::isnan(a) && std::isnan(b));
}

// Values whose sums round differently in another order, one in four a special value.
std::vector<float> values(size_t n, uint32_t seed) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  const float special[] = {kInf, -kInf, NAN, -NAN, -0.0f, 0.0f, 3.4e38f, -3.4e38f, 1e-45f};
  std::mt19937 bits(seed);
  std::uniform_real_distribution<float> mantissa(1.0f, 2.0f);
  std::uniform_int_distribution<int> exponent(-20, 26);
  std::vector<float> x(n);
  for (float& v : x) {
    v = bits() % 4 == 0 ? special[bits() % std::size(special)]
                        : std::ldexp(mantissa(bits), exponent(bits)) * (bits() % 2 ? 1.0f : -1.0f);
  }
  return x;
}

TEST(YnnShortRows, EachRowIsItsYnnRowSum) {
  for (int64_t k = 1; k <= k::kYnnShortRow; ++k) {
    const int64_t rows = 5000;
    const std::vector<float> x = values(size_t(rows * k), uint32_t(k));
    std::vector<float> out(size_t(rows), 7.0f);
    ASSERT_TRUE(k::ynn_short_row_sums(x.data(), rows, k, out.data())) << k;
    int64_t wrong = 0;
    for (int64_t r = 0; r < rows; ++r) {
      wrong += !same(out[size_t(r)], k::ynn_row_sum_portable(x.data() + r * k, k));
    }
    EXPECT_EQ(wrong, 0) << "rows of " << k;
  }
}

TEST(YnnShortRows, RowsOfNegativeZerosSumToPositiveZeroAsYnnpacksDo) {
  for (int64_t k = 1; k <= k::kYnnShortRow; ++k) {
    const std::vector<float> x(size_t(3 * k), -0.0f);
    std::vector<float> out(3, 7.0f);
    ASSERT_TRUE(k::ynn_short_row_sums(x.data(), 3, k, out.data()));
    for (const float v : out) EXPECT_EQ(std::bit_cast<uint32_t>(v), 0u) << "rows of " << k;
  }
}

TEST(YnnShortRows, OtherLengthsAreDeclinedWithNothingWritten) {
  const std::vector<float> x(64, 1.0f);
  for (const int64_t k : {int64_t{0}, k::kYnnShortRow + 1, int64_t{32}}) {
    float out = 7.0f;
    EXPECT_FALSE(k::ynn_short_row_sums(x.data(), 1, k, &out)) << k;
    EXPECT_EQ(out, 7.0f) << k;
  }
}

}  // namespace
