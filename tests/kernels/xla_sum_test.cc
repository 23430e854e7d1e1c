// kernels::reduce's float32 sums of contiguous rows in XLA's order (kernels/xla_sum.h): inputs
// whose sums differ by order (2^25 + 1 rounds back to 2^25 in float32) show where the windows of
// 32 fall, that a short row adds in order from +0, that a single element is itself, and that from
// 4,096 elements of input each row is YNNPACK's sum; a chain's fused sum gives the same bits.
#include "kernels/xla_sum.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "kernels/chain.h"
#include "kernels/reduce.h"
#include "kernels/thread_team.h"
#include "kernels/ynn_math.h"
#include "kernels/ynn_reduce.h"

namespace {

namespace k = spmd::kernels;
using spmd::DType;
using spmd::Shape;

constexpr float kTwoTo25 = 33554432.0F;  // 2^25: kTwoTo25 + 1 is kTwoTo25 again in float32

std::vector<float> row_sums(const std::vector<float>& x, int64_t rows, int64_t extent) {
  std::vector<float> out(static_cast<size_t>(rows), -7.0F);
  k::reduce(k::Reduce::kSum, DType::kFloat32, reinterpret_cast<const std::byte*>(x.data()),
            Shape{rows, extent}, 1, DType::kFloat32, reinterpret_cast<std::byte*>(out.data()));
  return out;
}

// A row of 40 is padded to 64 with 12 zeros before it: its windows hold elements 0-19 and
// 20-39. {.., 1 at 19, 2^25 at 20, -2^25 at 21, ..} is then 1 + (2^25 - 2^25) = 1; in order,
// or in windows from element 0, (1 + 2^25) - 2^25 = 0.
TEST(XlaSum, ALongRowIsSummedInWindowsOf32HalfThePaddingBeforeIt) {
  std::vector<float> x(40, 0.0F);
  x[19] = 1.0F;
  x[20] = kTwoTo25;
  x[21] = -kTwoTo25;
  EXPECT_EQ(row_sums(x, 1, 40)[0], 1.0F);
}

// Under 32 elements, in order: {1, 2^25, -2^25} is 0 (in reverse it would be 1).
TEST(XlaSum, AShortRowIsSummedInOrder) {
  EXPECT_EQ(row_sums({1.0F, kTwoTo25, -kTwoTo25}, 1, 3)[0], 0.0F);
}

// From +0, so zeros of either sign sum to +0; one element is itself, -0 included.
TEST(XlaSum, ARowStartsFromPlusZeroAndASingleElementIsItself) {
  EXPECT_FALSE(std::signbit(row_sums({-0.0F, -0.0F}, 1, 2)[0]));
  EXPECT_TRUE(std::signbit(row_sums({-0.0F}, 1, 1)[0]));
}

// From 4,096 elements of input (not of one row), each row is YNNPACK's sum.
TEST(XlaSum, FromAnInputOf4096ElementsEachRowIsYnnpacksSum) {
  const int64_t rows = 64, extent = 64;
  std::vector<float> x(static_cast<size_t>(rows * extent));
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(static_cast<float>(i) * 0.7F) * 1e3F;
  const std::vector<float> got = row_sums(x, rows, extent);
  int differs_from_windows = 0;
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = x.data() + r * extent;
    EXPECT_EQ(got[static_cast<size_t>(r)], k::ynn_row_sum(row, extent)) << "row " << r;
    differs_from_windows += row_sums(std::vector<float>(row, row + extent), 1, extent)[0] !=
                            got[static_cast<size_t>(r)];
  }
  EXPECT_GT(differs_from_windows, 0) << "no row tells the two orders apart";
}

// run_chain_reduce sums the chain's rows as reduce() sums the stored chain, whatever rows a
// pass holds, on every team; from 4,096 elements the chain's exps are YNNPACK's (chain.h).
TEST(XlaSum, AChainsFusedSumIsTheStoredChainsSum) {
  for (const auto& [rows, extent] : {std::pair<int64_t, int64_t>{3, 40}, {100, 100}, {7, 1000}}) {
    std::vector<float> x(static_cast<size_t>(rows * extent));
    for (size_t i = 0; i < x.size(); ++i) x[i] = std::cos(static_cast<float>(i) * 0.3F);
    const k::ChainStep exp{k::ChainStep::Kind::kUnary,
                           static_cast<uint8_t>(k::Unary::kExp),
                           DType::kFloat32,
                           DType::kFloat32,
                           {k::chain_input(0)}};
    const k::Input in[] = {{reinterpret_cast<const std::byte*>(x.data()), rows * extent}};
    std::vector<float> stored(x.size());
    k::run_chain({&exp, 1}, in, reinterpret_cast<std::byte*>(stored.data()), rows * extent);
    if (rows * extent >= k::kYnnReduceElements) {
      for (size_t i = 0; i < x.size(); ++i) stored[i] = k::ynn_exp(x[i]);
    }
    const std::vector<float> want = row_sums(stored, rows, extent);
    for (int size : {1, 2, 3}) {
      k::ThreadTeam team(size);
      const k::TeamScope scope(&team);
      std::vector<float> got(static_cast<size_t>(rows));
      k::run_chain_reduce({&exp, 1}, in, rows, extent, k::Reduce::kSum,
                          reinterpret_cast<std::byte*>(got.data()));
      EXPECT_EQ(got, want) << rows << " × " << extent << ", team of " << size;
    }
  }
}

}  // namespace
