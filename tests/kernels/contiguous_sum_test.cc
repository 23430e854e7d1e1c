// kernels::contiguous_sum (kernels/contiguous_sum.h): the documented order (element i into lane
// i mod kSumLanes while whole groups remain, the tail into lanes 0, 1, …, the lanes combined
// pairwise), written out here independently; the same bits from every build the CPU runs
// (AVX-512, AVX2, the baseline), at any address, for every length up to a few groups and for long
// rows; -0, NaN and infinities as that order gives them.
#include "kernels/contiguous_sum.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <random>
#include <vector>

namespace {

namespace k = spmd::kernels;

// The order as the header states it, one element at a time.
template <class T>
T reference(const std::vector<T>& x) {
  const auto lanes = static_cast<size_t>(k::kSumLanes<T>);
  std::vector<T> lane(lanes, T(0));
  const size_t whole = x.size() / lanes * lanes;
  for (size_t i = 0; i < whole; ++i) lane[i % lanes] += x[i];
  for (size_t i = whole; i < x.size(); ++i) lane[i - whole] += x[i];
  for (size_t width = lanes / 2; width >= 1; width /= 2) {
    for (size_t l = 0; l < width; ++l) lane[l] += lane[l + width];
  }
  return lane[0];
}

template <class T>
auto bits(T v) {
  if constexpr (sizeof(T) == 4) {
    return std::bit_cast<uint32_t>(v);
  } else {
    return std::bit_cast<uint64_t>(v);
  }
}

// The builds this CPU runs, the baseline first.
std::vector<k::SumBuild> builds() {
  std::vector<k::SumBuild> all = {k::SumBuild::kBaseline};
  if (k::widest_sum_build() >= k::SumBuild::kAvx2) all.push_back(k::SumBuild::kAvx2);
  if (k::widest_sum_build() >= k::SumBuild::kAvx512) all.push_back(k::SumBuild::kAvx512);
  return all;
}

// Which builds the tests below compare, printed: a build the CPU lacks cannot run here.
void say_which_builds() {
  const k::SumBuild widest = k::widest_sum_build();
  std::printf("this CPU runs the %s build of contiguous_sum%s\n",
              widest == k::SumBuild::kAvx512 ? "AVX-512"
              : widest == k::SumBuild::kAvx2 ? "AVX2"
                                             : "baseline",
              widest == k::SumBuild::kAvx512 ? "" : ": the wider ones are not tested here");
}

template <class T>
void expect_documented_order(const std::vector<T>& x) {
  const T want = reference(x);
  const auto n = static_cast<int64_t>(x.size());
  // The dispatched build (the widest the CPU has), each build it has, and the inline template.
  std::vector<T> got = {k::contiguous_sum(x.data(), n), k::lane_sum(x.data(), n)};
  for (k::SumBuild b : builds()) got.push_back(k::contiguous_sum(x.data(), n, b));
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got[i])) << "n " << n << ", sum " << i;
    } else {
      EXPECT_EQ(bits(got[i]), bits(want))
          << "n " << n << ", sum " << i << ": " << got[i] << ", the order gives " << want;
    }
  }
}

template <class T>
std::vector<T> spread(size_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<T> value(-1.0, 1.0);
  std::uniform_int_distribution<int> scale(-20, 20);
  std::vector<T> x(n);
  for (T& v : x) v = std::ldexp(value(gen), scale(gen));  // many magnitudes: rounding shows order
  return x;
}

TEST(ContiguousSum, EveryLengthUpToFourGroupsSumsInTheDocumentedOrder) {
  say_which_builds();
  for (size_t n = 0; n <= 4 * k::kSumLanes<float> + 1; ++n) {
    expect_documented_order(spread<float>(n, static_cast<uint32_t>(n)));
  }
  for (size_t n = 0; n <= 4 * k::kSumLanes<double> + 1; ++n) {
    expect_documented_order(spread<double>(n, static_cast<uint32_t>(n)));
  }
}

TEST(ContiguousSum, LongRowsSumInTheDocumentedOrderAtAnyAddress) {
  for (int64_t n : {1000, 4096, 4097, 100003}) {
    std::vector<float> x = spread<float>(static_cast<size_t>(n + 7), 51);
    const float want = reference(std::vector<float>(x.begin(), x.end() - 7));
    for (int offset = 0; offset < 8; ++offset) {
      const std::vector<float> shifted(x.begin() + offset, x.begin() + offset + n);
      std::vector<float> copy(x.size());
      std::copy(shifted.begin(), shifted.end(), copy.begin() + offset);
      if (offset == 0) {
        EXPECT_EQ(bits(k::contiguous_sum(copy.data(), n)), bits(want));
      }
      EXPECT_EQ(bits(k::contiguous_sum(copy.data() + offset, n)), bits(reference(shifted)))
          << "n " << n << " at offset " << offset;
    }
    expect_documented_order(spread<double>(static_cast<size_t>(n), 52));
  }
}

TEST(ContiguousSum, SignedZerosNaNAndInfinities) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  // All -0: every lane starts at +0 and +0 + -0 is +0, as XLA's sum (initial value +0) gives.
  std::vector<float> zeros(300, -0.0f);
  EXPECT_EQ(bits(k::contiguous_sum(zeros.data(), 300)), bits(0.0f));
  std::vector<float> x = spread<float>(300, 3);
  x[131] = kInf;
  EXPECT_EQ(k::contiguous_sum(x.data(), 300), kInf);
  x[7] = -kInf;
  EXPECT_TRUE(std::isnan(k::contiguous_sum(x.data(), 300)));
  x = spread<float>(300, 4);
  x[299] = std::numeric_limits<float>::quiet_NaN();  // in the tail
  EXPECT_TRUE(std::isnan(k::contiguous_sum(x.data(), 300)));
  expect_documented_order(x);
}

// The bfloat16 sum widens each element as it reads it: the bits of the documented order over
// the widened values, in every build, for every length up to four groups and a block's, with a
// NaN, infinities and -0 among them (and rows of -0 alone, which sum to +0).
TEST(ContiguousSum, ABfloat16RowSumsAsItsWidenedFloat32Row) {
  for (size_t n = 0; n <= 4 * k::kSumLanes<float> + 1; n += (n < 140 ? 1 : 37)) {
    for (int special = 0; special < 3; ++special) {
      std::vector<float> x = spread<float>(n, static_cast<uint32_t>(n) + 90);
      if (special == 1 && n > 5) {
        x[n / 2] = std::numeric_limits<float>::infinity();
        x[n - 1] = -0.0f;
      } else if (special == 2 && n > 5) {
        x[n / 3] = std::numeric_limits<float>::quiet_NaN();
      }
      std::vector<uint16_t> narrow(n);
      std::vector<float> wide(n);
      for (size_t i = 0; i < n; ++i) {  // the upper halves: bfloat16 values, truncated
        narrow[i] = static_cast<uint16_t>(bits(x[i]) >> 16);
        wide[i] = std::bit_cast<float>(static_cast<uint32_t>(narrow[i]) << 16);
      }
      const float want = reference(wide);
      const auto count = static_cast<int64_t>(n);
      std::vector<float> got = {k::contiguous_sum_bfloat16(narrow.data(), count)};
      for (k::SumBuild b : builds())
        got.push_back(k::contiguous_sum_bfloat16(narrow.data(), count, b));
      for (size_t i = 0; i < got.size(); ++i) {
        if (std::isnan(want)) {
          EXPECT_TRUE(std::isnan(got[i])) << "n " << n << ", sum " << i;
        } else {
          EXPECT_EQ(bits(got[i]), bits(want)) << "n " << n << ", sum " << i << ", case " << special;
        }
      }
    }
  }
  const std::vector<uint16_t> negative_zeros(4096, 0x8000);
  EXPECT_EQ(bits(k::contiguous_sum_bfloat16(negative_zeros.data(), 4096)), bits(0.0f));
}

TEST(ContiguousSum, IntegersAreExact) {
  std::vector<int32_t> x(1000);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<int32_t>(i * 7) - 3000;
  int64_t want = 0;
  for (int32_t v : x) want += v;
  EXPECT_EQ(k::contiguous_sum(x.data(), 1000), want);
}

}  // namespace
