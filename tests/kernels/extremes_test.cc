// kernels/extremes.h against definitions written out here from its contract, on both builds
// (the AVX2 one where the CPU has it, and `portable`): every length through the four-vector
// bodies' tails, rows four at a time, NaN, infinities, subnormals and zeros of both signs at random
// places, float32 and float64; and its integer loops against std::max, std::min and > on every
// integer type.
#include "kernels/extremes.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <numeric>
#include <random>
#include <type_traits>
#include <vector>

#include "kernels/float_environment.h"
#include "kernels/reduce.h"
#include "kernels/thread_team.h"

namespace {

namespace k = spmd::kernels;

// Values from a small set, so that equal values, signed zeros and special values recur; `nan`
// chooses whether NaN is among them.
template <class F>
std::vector<F> values(int64_t n, uint32_t seed, bool nan) {
  const F specials[] = {F(0.0),
                        F(-0.0),
                        std::numeric_limits<F>::infinity(),
                        -std::numeric_limits<F>::infinity(),
                        std::numeric_limits<F>::denorm_min(),
                        -std::numeric_limits<F>::denorm_min(),
                        F(1.5),
                        F(-2.25),
                        F(7),
                        std::numeric_limits<F>::quiet_NaN()};
  std::mt19937 bits(seed);
  std::vector<F> v(static_cast<size_t>(n));
  for (F& x : v) {
    const auto pick = bits() % (nan ? 10 : 9);
    x = bits() % 4 == 0 ? specials[pick] : static_cast<F>(static_cast<int>(bits() % 2001) - 1000);
  }
  return v;
}

// Only zeros of both signs and negative numbers: the maximum is a zero; and the mirror image.
template <class F>
std::vector<F> zeros(int64_t n, uint32_t seed, bool negative) {
  std::mt19937 bits(seed);
  std::vector<F> v(static_cast<size_t>(n));
  for (F& x : v) {
    const auto r = bits() % 3;
    x = r == 0 ? F(0.0) : r == 1 ? F(-0.0) : negative ? F(-3) : F(3);
  }
  return v;
}

// The contract: NaN if any; else the largest (smallest) value, +0 (-0) when that is zero and
// some zero has that sign.
template <class F>
F expected_extreme(bool maximum, const F* x, int64_t n) {
  F best = x[0];
  bool positive_zero = false, negative_zero = false;
  for (int64_t i = 0; i < n; ++i) {
    if (std::isnan(x[i])) return std::numeric_limits<F>::quiet_NaN();
    if (maximum ? x[i] > best : x[i] < best) best = x[i];
    if (x[i] == 0) (std::signbit(x[i]) ? negative_zero : positive_zero) = true;
  }
  if (best != 0) return best;
  if (maximum) return positive_zero ? F(0.0) : F(-0.0);
  return negative_zero ? F(-0.0) : F(0.0);
}

template <class F>
int64_t expected_first_max(const F* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    if (std::isnan(x[i])) return i;
  }
  int64_t best = 0;
  for (int64_t i = 1; i < n; ++i) {
    if (x[i] > x[best]) best = i;
  }
  return best;
}

template <class F>
using Bits = std::conditional_t<sizeof(F) == 4, uint32_t, uint64_t>;

// Equal bits, or both NaN.
template <class F>
::testing::AssertionResult same(F got, F want) {
  if (std::isnan(want) ? std::isnan(got)
                       : std::bit_cast<Bits<F>>(got) == std::bit_cast<Bits<F>>(want)) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure()
         << "got " << got << " (sign " << std::signbit(got) << "), want " << want << " (sign "
         << std::signbit(want) << ")";
}

std::vector<int64_t> extreme_lengths() {
  std::vector<int64_t> n;
  for (int64_t i = 1; i <= 140; ++i) n.push_back(i);
  for (int64_t i : {255, 256, 257, 1000, 4097}) n.push_back(i);
  return n;
}

template <class F>
void check_extreme_of() {
  uint32_t seed = 1;
  for (int64_t n : extreme_lengths()) {
    for (int variant = 0; variant < 4; ++variant) {
      const std::vector<F> x =
          variant < 2 ? values<F>(n, ++seed, variant == 1) : zeros<F>(n, ++seed, variant == 2);
      for (bool maximum : {true, false}) {
        const F want = expected_extreme(maximum, x.data(), n);
        EXPECT_TRUE(same(k::extreme_of(maximum, x.data(), n), want))
            << (maximum ? "max" : "min") << " of " << n << ", variant " << variant;
        EXPECT_TRUE(same(k::portable::extreme_of(maximum, x.data(), n), want))
            << "portable " << (maximum ? "max" : "min") << " of " << n << ", variant " << variant;
      }
      EXPECT_EQ(k::first_max_of(x.data(), n), expected_first_max(x.data(), n))
          << "argmax of " << n << ", variant " << variant;
      EXPECT_EQ(k::portable::first_max_of(x.data(), n), expected_first_max(x.data(), n))
          << "portable argmax of " << n << ", variant " << variant;
    }
  }
}

TEST(Extremes, AlongARowNaNWinsAndZerosOfBothSignsGivePlusZeroForMaxMinusForMin) {
  check_extreme_of<float>();
  check_extreme_of<double>();
}

// Rows taken four at a time and one after another (extremes_of_rows_in, the two orders
// extremes_of_rows chooses between), and as extremes_of_rows takes them: each row's result that
// of the contract, for every length through the two-vector body's tail, counts that leave rows
// over, rows apart by more than their length, NaN, infinities, subnormals and zeros of both
// signs.
template <class F>
void check_extremes_of_rows() {
  uint32_t seed = 500;
  for (int64_t n : {1, 2, 3, 7, 8, 15, 16, 17, 31, 32, 33, 47, 100, 257}) {
    for (int64_t count : {1, 3, 4, 5, 8, 9, 17}) {
      for (int variant = 0; variant < 4; ++variant) {
        const int64_t stride = n + 5;
        const std::vector<F> x = variant < 2 ? values<F>(count * stride, ++seed, variant == 1)
                                             : zeros<F>(count * stride, ++seed, variant == 2);
        for (bool maximum : {true, false}) {
          for (int order = 0; order < 3; ++order) {
            std::vector<F> out(static_cast<size_t>(count), F(42));
            if (order == 0) {
              k::extremes_of_rows(maximum, x.data(), count, n, stride, out.data());
            } else {
              k::extremes_of_rows_in(
                  order == 1 ? k::RowOrder::kInterleaved : k::RowOrder::kSequential, maximum,
                  x.data(), count, n, stride, out.data());
            }
            for (int64_t r = 0; r < count; ++r) {
              const F want = expected_extreme(maximum, x.data() + r * stride, n);
              EXPECT_TRUE(same(out[static_cast<size_t>(r)], want))
                  << (maximum ? "max" : "min") << " of row " << r << " of " << count << ", " << n
                  << " long, variant " << variant << ", order " << order;
            }
          }
        }
      }
    }
  }
}

TEST(Extremes, RowsTakenFourAtATimeAreEachTheirOwnReduction) {
  check_extremes_of_rows<float>();
  check_extremes_of_rows<double>();
}

// A call of 4 MiB or more chooses, once, the order that reads this machine's rows faster (four
// interleaved or one after another), by timing both on its own rows: its results, and those of
// the calls after it, are still each row's contract, NaN and zeros of both signs included.
TEST(Extremes, ALargeCallChoosesARowOrderOnceAndEveryRowKeepsItsContract) {
#if defined(__x86_64__)
  const bool avx2 = __builtin_cpu_supports("avx2");
#else
  const bool avx2 = false;
#endif
  if (!avx2) GTEST_SKIP() << "without AVX2 the rows take the portable path, which has no order";
  constexpr int64_t kCount = 1030, kN = 1029, kStride = 1031;  // 4.1 MiB of float32 rows
  std::vector<float> x = values<float>(kCount * kStride, 77, false);
  x[5 * kStride + 1000] = std::numeric_limits<float>::quiet_NaN();  // row 5, in its tail
  const std::vector<float> zero_rows = zeros<float>(kStride * 4, 78, true);
  std::copy(zero_rows.begin(), zero_rows.end(), x.begin() + 100 * kStride);  // rows 100 to 103
  for (int pass = 0; pass < 2; ++pass) {
    for (bool maximum : {true, false}) {
      std::vector<float> out(kCount, 42.0f);
      k::extremes_of_rows(maximum, x.data(), kCount, kN, kStride, out.data());
      for (int64_t r = 0; r < kCount; ++r) {
        const float want = expected_extreme(maximum, x.data() + r * kStride, kN);
        ASSERT_TRUE(same(out[static_cast<size_t>(r)], want))
            << (maximum ? "max" : "min") << " of row " << r << ", pass " << pass;
      }
    }
    EXPECT_NE(k::extremes_row_order(), k::RowOrder::kUnknown) << "no order chosen, pass " << pass;
  }
}

// Rows folded into running extremes, one at a time and four at a time, against the contract
// per column; NaN results compared as NaN (their sign and payload are unspecified).
template <class F>
void check_folds(bool portable) {
  auto fold = [&](auto... a) {
    portable ? k::portable::fold_extremes(a...) : k::fold_extremes(a...);
  };
  auto fold_rows = [&](auto... a) {
    portable ? k::portable::fold_extreme_rows(a...) : k::fold_extreme_rows(a...);
  };
  auto fold_first = [&](auto... a) {
    portable ? k::portable::fold_first_max(a...) : k::fold_first_max(a...);
  };
  auto fold_first_rows = [&](auto... a) {
    portable ? k::portable::fold_first_max_rows(a...) : k::fold_first_max_rows(a...);
  };
  uint32_t seed = 100;
  for (int64_t width : {1, 3, 7, 8, 9, 31, 33, 100}) {
    for (int64_t rows : {1, 2, 4, 5, 9}) {
      const int64_t stride = width + 3;
      ++seed;
      std::vector<F> x = values<F>(rows * stride, seed, seed % 2 == 0);
      for (bool maximum : {true, false}) {
        std::vector<F> one(x.begin(), x.begin() + width), four = one;
        for (int64_t r = 1; r < rows; ++r) {
          fold(maximum, one.data(), x.data() + r * stride, width);
        }
        fold_rows(maximum, four.data(), x.data() + stride, rows - 1, stride, width);
        for (int64_t j = 0; j < width; ++j) {
          std::vector<F> column;
          for (int64_t r = 0; r < rows; ++r) column.push_back(x[r * stride + j]);
          const F want = expected_extreme(maximum, column.data(), rows);
          EXPECT_TRUE(same(one[j], want)) << "fold_extremes, column " << j << " of " << width;
          EXPECT_TRUE(same(four[j], want)) << "fold_extreme_rows, column " << j << " of " << width;
        }
      }
      std::vector<F> best(x.begin(), x.begin() + width), best_rows = best;
      std::vector<int32_t> index(width, 0), index_rows = index;
      for (int64_t r = 1; r < rows; ++r) {
        fold_first(best.data(), index.data(), x.data() + r * stride, width,
                   static_cast<int32_t>(r));
      }
      fold_first_rows(best_rows.data(), index_rows.data(), x.data() + stride, rows - 1, stride,
                      width, 1);
      for (int64_t j = 0; j < width; ++j) {
        std::vector<F> column;
        for (int64_t r = 0; r < rows; ++r) column.push_back(x[r * stride + j]);
        const int64_t want = expected_first_max(column.data(), rows);
        EXPECT_EQ(index[j], want) << "fold_first_max, column " << j << " of " << width << ", "
                                  << rows << " rows";
        EXPECT_EQ(index_rows[j], want)
            << "fold_first_max_rows, column " << j << " of " << width << ", " << rows << " rows";
      }
    }
  }
}

TEST(Extremes, AcrossRowsEachColumnIsItsOwnReduction) {
  for (bool portable : {false, true}) {
    check_folds<float>(portable);
    check_folds<double>(portable);
  }
}

// Where the thread reads subnormals as zero (as jit runs: float_environment.h), every path
// returns the extreme of the values read so, a subnormal's zero of its sign and never its bits,
// whether a lane or a tail meets it: JAX's max([1e-45] * 3) is 0, min([-1e-45, 1]) -0 (and
// max([1e-45]) 1e-45: one element is not compared).
template <class F>
void check_subnormals_read_as_zero() {
  const k::FlushSubnormalsScope flush;
  const F tiny = std::numeric_limits<F>::denorm_min();
  const F choices[] = {tiny, -tiny, 3 * tiny, -2 * tiny, F(0.0), F(-0.0)};
  std::mt19937 bits(11);
  auto read_as_zero = [](F x) {
    return std::fpclassify(x) == FP_SUBNORMAL ? F(std::signbit(x) ? -0.0 : 0.0) : x;
  };
  for (int64_t n = 1; n <= 80; ++n) {
    std::vector<F> x(static_cast<size_t>(n)), flushed(x.size());
    for (size_t i = 0; i < x.size(); ++i) {
      x[i] = choices[bits() % 6];
      flushed[i] = read_as_zero(x[i]);
    }
    for (bool maximum : {true, false}) {
      // One element is moved, not compared, as XLA's reduction of one element is a copy.
      const F want = n == 1 ? x[0] : expected_extreme(maximum, flushed.data(), n);
      EXPECT_TRUE(same(k::extreme_of(maximum, x.data(), n), want))
          << (maximum ? "max" : "min") << " of " << n << " subnormals and zeros";
      EXPECT_TRUE(same(k::portable::extreme_of(maximum, x.data(), n), want))
          << "portable " << (maximum ? "max" : "min") << " of " << n;
      // The same row nine times, taken four at a time (short rows: eight, or four, at a time in
      // lanes, then the rest one by one).
      std::vector<F> four_rows, four_out(9);
      for (int r = 0; r < 9; ++r) four_rows.insert(four_rows.end(), x.begin(), x.end());
      k::extremes_of_rows(maximum, four_rows.data(), 9, n, n, four_out.data());
      for (int r = 0; r < 9; ++r) {
        EXPECT_TRUE(same(four_out[static_cast<size_t>(r)], want))
            << "extremes_of_rows, row " << r << ", " << (maximum ? "max" : "min") << " of " << n;
      }
      // The same values as n rows of one column... and of width n, folded across two rows.
      std::vector<F> acc(x), acc4(x), zero(x.size(), F(0.0));
      k::fold_extremes(maximum, acc.data(), zero.data(), n);
      k::fold_extreme_rows(maximum, acc4.data(), zero.data(), 1, 0, n);
      for (int64_t j = 0; j < n; ++j) {
        const F pair[] = {flushed[j], F(0.0)};
        const F column = expected_extreme(maximum, pair, 2);
        EXPECT_TRUE(same(acc[j], column)) << "fold_extremes, column " << j << " of " << n;
        EXPECT_TRUE(same(acc4[j], column)) << "fold_extreme_rows, column " << j << " of " << n;
      }
    }
  }
}

TEST(Extremes, SubnormalsReadAsZeroWhereTheThreadDoesOnEveryPath) {
  check_subnormals_read_as_zero<float>();
  check_subnormals_read_as_zero<double>();
}

// The integer loops against std::max/min and > per column (and the contiguous fold against
// std::max_element), every integer type, every width
// through the vector bodies' tails, the type's extremes among the values.
template <class T>
void check_integer_folds() {
  const spmd::DType dtype = spmd::dtype_of<T>();
  std::mt19937_64 bits(static_cast<uint64_t>(dtype) + 1);
  for (int64_t width : {1, 5, 16, 31, 33, 64, 100}) {
    const int64_t rows = 7, stride = width + 2;
    std::vector<T> x(static_cast<size_t>(rows * stride));
    for (T& v : x) {
      const auto r = bits() % 8;
      v = r == 0   ? std::numeric_limits<T>::max()
          : r == 1 ? std::numeric_limits<T>::min()
                   : static_cast<T>(bits());
    }
    const auto* in = reinterpret_cast<const std::byte*>(x.data());
    for (bool maximum : {true, false}) {
      std::vector<T> acc(x.begin(), x.begin() + width);
      ASSERT_TRUE(k::fold_integer_rows(maximum, dtype, reinterpret_cast<std::byte*>(acc.data()),
                                       in + stride * sizeof(T), rows - 1, stride, width));
      for (int64_t j = 0; j < width; ++j) {
        T want = x[j];
        for (int64_t r = 1; r < rows; ++r) {
          want = maximum ? std::max(want, x[r * stride + j]) : std::min(want, x[r * stride + j]);
        }
        EXPECT_EQ(acc[j], want) << spmd::dtype_name(dtype) << " column " << j << " of " << width;
      }
    }
    // The sums, wrapped modulo 2^bits (the extremes among the values overflow any type).
    std::vector<T> sums(x.begin(), x.begin() + width);
    ASSERT_TRUE(k::sum_integer_rows(dtype, reinterpret_cast<std::byte*>(sums.data()),
                                    in + stride * sizeof(T), rows - 1, stride, width));
    for (int64_t j = 0; j < width; ++j) {
      uint64_t want = 0;
      for (int64_t r = 0; r < rows; ++r) want += static_cast<uint64_t>(x[r * stride + j]);
      EXPECT_EQ(sums[j], static_cast<T>(want))
          << spmd::dtype_name(dtype) << " sum, column " << j << " of " << width;
    }
    std::vector<T> best(x.begin(), x.begin() + width);
    std::vector<int32_t> index(width, 0);
    for (int64_t r = 1; r < rows; ++r) {
      ASSERT_TRUE(k::fold_integer_first_max(dtype, reinterpret_cast<std::byte*>(best.data()),
                                            index.data(), in + r * stride * sizeof(T), width,
                                            static_cast<int32_t>(r)));
    }
    for (int64_t j = 0; j < width; ++j) {
      int32_t want = 0;
      for (int32_t r = 1; r < rows; ++r) {
        if (x[r * stride + j] > x[want * stride + j]) want = r;
      }
      EXPECT_EQ(index[j], want) << spmd::dtype_name(dtype) << " argmax, column " << j;
    }
  }
  // The contiguous fold, over every length through the vector bodies and their tails (an int8
  // vector is 32 elements, a uint64 one 4), the extremes anywhere.
  std::vector<T> x(300);
  for (T& v : x) v = static_cast<T>(bits() % 3 == 0 ? bits() : bits() % 17);
  for (int64_t n = 1; n <= 300; ++n) {
    for (int64_t at : {int64_t{0}, n / 2, n - 1}) {
      std::vector<T> y(x.begin(), x.begin() + n);
      for (bool maximum : {true, false}) {
        y[at] = maximum ? std::numeric_limits<T>::max() - T(n % 2) : std::numeric_limits<T>::min();
        T got{};
        ASSERT_TRUE(k::integer_extreme_of(maximum, dtype,
                                          reinterpret_cast<const std::byte*>(y.data()), n,
                                          reinterpret_cast<std::byte*>(&got)));
        const T want =
            maximum ? *std::max_element(y.begin(), y.end()) : *std::min_element(y.begin(), y.end());
        EXPECT_EQ(got, want) << spmd::dtype_name(dtype) << " " << (maximum ? "max" : "min")
                             << " of " << n << ", extreme at " << at;
      }
    }
  }
}

TEST(Extremes, IntegerRowsFoldIntoMaxMinAndTheFirstMaximum) {
  check_integer_folds<int8_t>();
  check_integer_folds<int16_t>();
  check_integer_folds<int32_t>();
  check_integer_folds<int64_t>();
  check_integer_folds<uint8_t>();
  check_integer_folds<uint16_t>();
  check_integer_folds<uint32_t>();
  check_integer_folds<uint64_t>();
  std::byte unused[4] = {};
  EXPECT_FALSE(k::fold_integer_rows(true, spmd::DType::kFloat32, unused, unused, 1, 1, 1));
  EXPECT_FALSE(k::integer_extreme_of(true, spmd::DType::kFloat32, unused, 1, unused));
}

}  // namespace

namespace short_rows {

namespace k = spmd::kernels;

// argmax over a short last axis (kernels/reduce.h's argmax: rows of up to 16 elements take their
// own loops) against the rule: the first NaN, else the first element equal to the maximum (0 and
// -0 equal), for every length to 17 and some to 129, floats and integers, on a team of two.
template <class T>
void expect_first_maxima(spmd::DType dtype) {
  std::mt19937 rng(21);
  std::vector<int64_t> lengths(17);
  std::iota(lengths.begin(), lengths.end(), 1);
  lengths.insert(lengths.end(), {31, 64, 100, 128, 129});  // floats gather columns up to 128
  for (const int64_t n : lengths) {
    const int64_t rows = 3000;
    std::vector<T> x(static_cast<size_t>(rows * n));
    for (auto& v : x) {
      v = static_cast<T>(int(rng() % 5) - 2);  // many ties
      if constexpr (std::is_floating_point_v<T>) {
        if (rng() % 16 == 0) v = std::numeric_limits<T>::quiet_NaN();
        if (rng() % 16 == 0) v = T(-0.0);
      }
    }
    std::vector<int32_t> got(static_cast<size_t>(rows), -1);
    {
      k::ThreadTeam team(2);
      const k::TeamScope on(&team);
      k::argmax(dtype, reinterpret_cast<const std::byte*>(x.data()), {rows, n}, 1,
                reinterpret_cast<std::byte*>(got.data()));
    }
    for (int64_t r = 0; r < rows; ++r) {
      const T* row = x.data() + r * n;
      int64_t want = 0;
      bool nan = false;
      for (int64_t j = 0; j < n && !nan; ++j) {
        if constexpr (std::is_floating_point_v<T>) {
          if (std::isnan(row[j])) {
            want = j;
            nan = true;
            continue;
          }
        }
        if (!nan && row[j] > row[want]) want = j;
      }
      ASSERT_EQ(got[static_cast<size_t>(r)], want)
          << spmd::dtype_name(dtype) << ", rows of " << n << ", row " << r;
    }
  }
}

TEST(Extremes, ArgmaxOfShortRowsIsEachRowsFirstMaximum) {
  expect_first_maxima<float>(spmd::DType::kFloat32);
  expect_first_maxima<double>(spmd::DType::kFloat64);
  expect_first_maxima<int32_t>(spmd::DType::kInt32);
  expect_first_maxima<int8_t>(spmd::DType::kInt8);
  expect_first_maxima<uint16_t>(spmd::DType::kUInt16);
}

}  // namespace short_rows
