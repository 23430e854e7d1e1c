// kernels::cumsum and cumprod (kernels/ordering.h) down a leading axis, where every column is
// scanned side by side with the others, against each column scanned alone as a line: the same
// bits at every length around XLA's rows of 16 and rows of rows, for widths around the chunks
// of columns the team takes, with signed zeros, NaN and infinities, on every team. take along
// the last axis against its indices. sort against a stable sort in JAX's order, for every key
// dtype, both axes, both directions, with and without a payload, on every team.
#include "kernels/ordering.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/thread_team.h"

namespace {

namespace k = spmd::kernels;
using spmd::DType;

template <class T>
std::vector<T> matrix(int64_t n, int64_t w, bool multiply, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<T> v(static_cast<size_t>(n * w));
  for (auto& x : v) {
    if constexpr (std::is_floating_point_v<T>) {
      std::uniform_real_distribution<T> d(multiply ? T(0.9) : T(-1), multiply ? T(1.1) : T(1));
      x = d(rng);
    } else {
      x = static_cast<T>(rng());
    }
  }
  if constexpr (std::is_floating_point_v<T>) {
    // A column of -0 (whose sum stays -0 only if no +0 is added), and specials elsewhere.
    for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i * w)] = T(-0.0);
    v[static_cast<size_t>(w / 2)] = NAN;
    v[static_cast<size_t>((n / 2) * w + w - 1)] = INFINITY;
  }
  return v;
}

template <class T, bool kMultiply>
void expect_columns_are_lines(DType dtype, int64_t n, int64_t w) {
  const std::vector<T> x = matrix<T>(n, w, kMultiply, static_cast<uint32_t>(n * 7 + w));
  const auto scan = kMultiply ? k::cumprod : k::cumsum;
  std::vector<T> got(x.size());
  {
    k::ThreadTeam team(2);
    const k::TeamScope on(&team);
    scan(dtype, reinterpret_cast<const std::byte*>(x.data()), {n, w}, 0,
         reinterpret_cast<std::byte*>(got.data()));
  }
  std::vector<T> column(static_cast<size_t>(n)), want(static_cast<size_t>(n));
  for (int64_t j = 0; j < w; ++j) {
    for (int64_t i = 0; i < n; ++i)
      column[static_cast<size_t>(i)] = x[static_cast<size_t>(i * w + j)];
    scan(dtype, reinterpret_cast<const std::byte*>(column.data()), {n}, 0,
         reinterpret_cast<std::byte*>(want.data()));
    for (int64_t i = 0; i < n; ++i) {
      const T g = got[static_cast<size_t>(i * w + j)], e = want[static_cast<size_t>(i)];
      using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
      ASSERT_EQ(std::bit_cast<Bits>(g), std::bit_cast<Bits>(e))
          << spmd::dtype_name(dtype) << (kMultiply ? " cumprod" : " cumsum") << ", " << n << " x "
          << w << ", column " << j << ", row " << i << ": " << g << ", the line's " << e;
    }
  }
}

TEST(Ordering, ScansDownALeadingAxisAreEachColumnsScanBitForBit) {
  for (const int64_t n : {1, 2, 16, 17, 255, 256, 257, 4097}) {
    for (const int64_t w : {3, 130}) {
      expect_columns_are_lines<float, false>(DType::kFloat32, n, w);
      expect_columns_are_lines<float, true>(DType::kFloat32, n, w);
      expect_columns_are_lines<double, false>(DType::kFloat64, n, w);
      expect_columns_are_lines<int32_t, false>(DType::kInt32, n, w);
      expect_columns_are_lines<uint64_t, true>(DType::kUInt64, n, w);
    }
  }
}

// take along the last axis, element by element (elements of 1 to 8 bytes) and as rows (16
// bytes), against the definition: out[o][i] = in[o][clamp(indices[i])], indices out of range,
// repeated and reversed, more or fewer than the axis, on a team of two.
TEST(Ordering, TakeAlongTheLastAxisIsEachLineAtTheClampedIndices) {
  const int64_t outer = 37, n = 300;
  std::mt19937 rng(5);
  std::vector<int32_t> reversed(n), random(500);
  for (int64_t i = 0; i < n; ++i)
    reversed[static_cast<size_t>(i)] = static_cast<int32_t>(n - 1 - i);
  for (auto& i : random) i = static_cast<int32_t>(rng() % 700) - 200;  // clamped both ways
  for (const size_t size : {size_t{1}, size_t{2}, size_t{4}, size_t{8}, size_t{16}}) {
    std::vector<std::byte> x(static_cast<size_t>(outer * n) * size);
    for (auto& b : x) b = static_cast<std::byte>(rng() & 0xff);
    for (const std::vector<int32_t>* idx : {&reversed, &random}) {
      const auto count = static_cast<int64_t>(idx->size());
      std::vector<std::byte> got(static_cast<size_t>(outer * count) * size);
      {
        k::ThreadTeam team(2);
        const k::TeamScope on(&team);
        k::take(size, x.data(), {outer, n}, 1, idx->data(), count, got.data());
      }
      for (int64_t o = 0; o < outer; ++o) {
        for (int64_t i = 0; i < count; ++i) {
          const int64_t at = std::clamp<int64_t>((*idx)[static_cast<size_t>(i)], 0, n - 1);
          ASSERT_EQ(std::memcmp(got.data() + static_cast<size_t>(o * count + i) * size,
                                x.data() + static_cast<size_t>(o * n + at) * size, size),
                    0)
              << size << "-byte elements, line " << o << ", index " << i;
        }
      }
    }
  }
}

// take of the reversed axis (jnp.flip) along a leading or middle axis, whose rows of `inner`
// elements it reverses in place of gathering, and of indices that are a reversal but for one,
// which must not be taken for one: the definition, out[o][i][j] = in[o][clamp(idx[i])][j].
TEST(Ordering, TakeOfTheReversedAxisReversesEachLinesRows) {
  const int64_t outer = 5, n = 70, inner = 3;
  std::vector<int32_t> reversed(n);
  for (int64_t i = 0; i < n; ++i) reversed[static_cast<size_t>(i)] = int32_t(n - 1 - i);
  std::vector<int32_t> almost = reversed;
  almost[10] = almost[11];
  std::mt19937 rng(9);
  for (const size_t size : {size_t{1}, size_t{2}, size_t{4}, size_t{8}}) {
    std::vector<std::byte> x(static_cast<size_t>(outer * n * inner) * size);
    for (auto& b : x) b = static_cast<std::byte>(rng() & 0xff);
    for (const std::vector<int32_t>* idx : {&reversed, &almost}) {
      std::vector<std::byte> got(x.size());
      {
        k::ThreadTeam team(2);
        const k::TeamScope on(&team);
        k::take(size, x.data(), {outer, n, inner}, 1, idx->data(), n, got.data());
      }
      for (int64_t o = 0; o < outer; ++o) {
        for (int64_t i = 0; i < n; ++i) {
          const int64_t at = (*idx)[static_cast<size_t>(i)];
          ASSERT_EQ(std::memcmp(got.data() + static_cast<size_t>((o * n + i) * inner) * size,
                                x.data() + static_cast<size_t>((o * n + at) * inner) * size,
                                size * inner),
                    0)
              << size << "-byte elements, line " << o << ", row " << i
              << (idx == &almost ? ", indices reversed but for one" : "");
        }
      }
    }
  }
}

// take of the reversed axis of one line (a flat jnp.flip), long enough that the team splits the
// line's rows: the definition, every element, rows of one and of three elements, teams of two
// and three; and indices that are a reversal but for one near the end, checked in chunks, must
// not be taken for one.
TEST(Ordering, TakeOfOneLongReversedLineIsSplitOverTheTeam) {
  const int64_t n = 100003;
  std::vector<int32_t> reversed(n);
  for (int64_t i = 0; i < n; ++i) reversed[static_cast<size_t>(i)] = int32_t(n - 1 - i);
  std::vector<int32_t> almost = reversed;
  almost[static_cast<size_t>(n - 5)] = 7;
  std::mt19937 rng(17);
  for (const int64_t inner : {int64_t{1}, int64_t{3}}) {
    for (const size_t size : {size_t{1}, size_t{2}, size_t{4}, size_t{8}}) {
      std::vector<std::byte> x(static_cast<size_t>(n * inner) * size);
      for (auto& b : x) b = static_cast<std::byte>(rng() & 0xff);
      for (const int threads : {2, 3}) {
        for (const std::vector<int32_t>* idx : {&reversed, &almost}) {
          std::vector<std::byte> got(x.size());
          {
            k::ThreadTeam team(threads);
            const k::TeamScope on(&team);
            k::take(size, x.data(), {n, inner}, 0, idx->data(), n, got.data());
          }
          for (int64_t i = 0; i < n; ++i) {
            const int64_t at = (*idx)[static_cast<size_t>(i)];
            ASSERT_EQ(std::memcmp(got.data() + static_cast<size_t>(i * inner) * size,
                                  x.data() + static_cast<size_t>(at * inner) * size,
                                  size * static_cast<size_t>(inner)),
                      0)
                << size << "-byte elements, rows of " << inner << ", row " << i << ", team "
                << threads << (idx == &almost ? ", indices reversed but for one" : "");
          }
        }
      }
    }
  }
}

// search_sorted, many queries at once and side by side, against a binary search for each:
// the first position whose element is not below the query in JAX's order (-0 equals 0, NaN after
// every number), for counts around the queries searched together, on every team.
TEST(Ordering, SearchSortedIsEachQuerysFirstPositionNotBelowIt) {
  std::mt19937 rng(13);
  std::vector<float> sorted(1000);
  for (auto& v : sorted) v = float(int(rng() % 400) - 200) * 0.25f;
  std::sort(sorted.begin(), sorted.end());
  sorted.back() = NAN;
  const auto below = [](float x, float query) {  // x before query in JAX's order
    if (std::isnan(x)) return false;
    return std::isnan(query) || x < query;
  };
  for (const int64_t count : {1, 15, 16, 17, 257, 1000}) {
    std::vector<float> queries(static_cast<size_t>(count));
    for (auto& v : queries) v = float(int(rng() % 440) - 220) * 0.25f;
    queries[0] = -0.0f;
    if (count > 2) queries[2] = NAN;
    for (const int size : {1, 2, 3}) {
      k::ThreadTeam team(size);
      const k::TeamScope on(&team);
      std::vector<int32_t> got(static_cast<size_t>(count), -1);
      k::search_sorted(DType::kFloat32, reinterpret_cast<const std::byte*>(sorted.data()),
                       static_cast<int64_t>(sorted.size()),
                       reinterpret_cast<const std::byte*>(queries.data()), count, got.data());
      for (int64_t i = 0; i < count; ++i) {
        const float query = queries[static_cast<size_t>(i)];
        const auto at = std::partition_point(sorted.begin(), sorted.end(),
                                             [&](float x) { return below(x, query); });
        ASSERT_EQ(got[static_cast<size_t>(i)], at - sorted.begin())
            << count << " queries, team of " << size << ", query " << i << " (" << query << ")";
      }
    }
  }
}

}  // namespace

namespace sort_test {

// JAX's sort order as a reference: -0 equals 0, every NaN equals every other and follows every
// number.
template <class T>
bool less(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a)) return false;
    if (std::isnan(b)) return true;
  }
  return a < b;
}

// Each line of a (rows × cols) matrix along `axis`, stably sorted by less() (reversed for a
// descending sort: a payload's equal keys later first, positions' in order), as positions.
template <class T>
std::vector<int32_t> reference_order(const std::vector<T>& x, int64_t rows, int64_t cols, int axis,
                                     bool descending, bool later_first) {
  const int64_t n = axis == 0 ? rows : cols, lines = axis == 0 ? cols : rows;
  const int64_t step = axis == 0 ? cols : 1;
  std::vector<int32_t> out(x.size());
  for (int64_t l = 0; l < lines; ++l) {
    const int64_t base = axis == 0 ? l : l * cols;
    std::vector<int32_t> order(static_cast<size_t>(n));
    std::iota(order.begin(), order.end(), 0);
    const auto key = [&](int32_t i) { return x[static_cast<size_t>(base + i * step)]; };
    std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
      return descending ? less(key(b), key(a)) : less(key(a), key(b));
    });
    if (later_first) {  // within each run of equal keys, the later first
      for (size_t i = 0; i < order.size();) {
        size_t j = i + 1;
        while (j < order.size() && !less(key(order[i]), key(order[j])) &&
               !less(key(order[j]), key(order[i]))) {
          ++j;
        }
        std::reverse(order.begin() + static_cast<std::ptrdiff_t>(i),
                     order.begin() + static_cast<std::ptrdiff_t>(j));
        i = j;
      }
    }
    for (int64_t i = 0; i < n; ++i) {
      out[static_cast<size_t>(base + i * step)] = order[static_cast<size_t>(i)];
    }
  }
  return out;
}

// Keys with many equal ones (a few distinct values), and for floats both zeros and NaNs.
template <class T>
std::vector<T> keys(size_t n, uint32_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<T> x(n);
  for (auto& v : x) {
    if constexpr (std::is_floating_point_v<T>) {
      const T special[] = {T(0), T(-0.0), T(NAN), T(-NAN), T(INFINITY), T(-INFINITY)};
      v = rng() % 4 == 0 ? special[rng() % 6] : T(int64_t(rng() % 9) - 4) * T(0.5);
    } else if constexpr (std::is_signed_v<T>) {
      v = rng() % 8 == 0 ? std::numeric_limits<T>::min() : T(int64_t(rng() % 9) - 4);
    } else {
      v = rng() % 8 == 0 ? std::numeric_limits<T>::max() : T(rng() % 9);
    }
  }
  return x;
}

template <class T>
void expect_sorts_as_reference(DType dtype) {
  const int64_t rows = 37, cols = 300;
  const std::vector<T> x = keys<T>(static_cast<size_t>(rows * cols), 5);
  for (const int axis : {0, 1}) {
    for (const bool descending : {false, true}) {
      for (const bool payload : {false, true}) {
        const k::SortSpec spec{.shape = {rows, cols},
                               .axis = axis,
                               .descending = descending,
                               .payload_size = payload ? sizeof(T) : 0};
        const std::vector<int32_t> order =
            reference_order(x, rows, cols, axis, descending, descending && payload);
        for (const int size : {1, 2, 3}) {
          k::ThreadTeam team(size);
          const k::TeamScope on(&team);
          std::vector<std::byte> out(x.size() * (payload ? sizeof(T) : sizeof(int32_t)));
          k::sort(dtype, reinterpret_cast<const std::byte*>(x.data()), spec,
                  reinterpret_cast<const std::byte*>(x.data()), out.data());
          const std::string what = fmt::format(
              "{} axis {}{}{}, team of {}", spmd::dtype_name(dtype), axis,
              descending ? " descending" : "", payload ? " with its payload" : "", size);
          for (size_t i = 0; i < x.size(); ++i) {
            const int64_t line_base = axis == 0 ? int64_t(i) % cols : int64_t(i) / cols * cols;
            const int64_t step = axis == 0 ? cols : 1;
            const T want = x[static_cast<size_t>(line_base + order[i] * step)];
            if (payload) {
              using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
              Bits got = 0;
              std::memcpy(&got, out.data() + i * sizeof(T), sizeof(T));
              ASSERT_EQ(got, std::bit_cast<Bits>(want)) << what << ", element " << i;
            } else {
              int32_t got = 0;
              std::memcpy(&got, out.data() + i * sizeof(int32_t), sizeof(int32_t));
              ASSERT_EQ(got, order[i]) << what << ", element " << i;
            }
          }
        }
      }
    }
  }
}

TEST(Ordering, SortIsTheStableSortInJaxsOrderOnEveryTeam) {
  expect_sorts_as_reference<int32_t>(DType::kInt32);
  expect_sorts_as_reference<uint32_t>(DType::kUInt32);
  expect_sorts_as_reference<float>(DType::kFloat32);
  expect_sorts_as_reference<int64_t>(DType::kInt64);
  expect_sorts_as_reference<uint64_t>(DType::kUInt64);
  expect_sorts_as_reference<double>(DType::kFloat64);
}

}  // namespace sort_test
