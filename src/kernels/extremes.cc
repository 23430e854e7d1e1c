#include "kernels/extremes.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "kernels/dispatch.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define SPMD_EXTREMES_AVX2 1
#endif

namespace spmd::kernels {
namespace {

template <class F>
using Bits = std::conditional_t<sizeof(F) == 4, uint32_t, uint64_t>;

// A value with its sign bit flipped: bits only, so a subnormal stays one (as a vector XOR).
template <class F>
F flip(F x) {
  return std::bit_cast<F>(Bits<F>(std::bit_cast<Bits<F>>(x) ^ (Bits<F>(1) << (sizeof(F) * 8 - 1))));
}

// The one fold every path of this file takes, here for one element: the OR of the minimum in
// both operand orders, as minss/minsd give it (the second operand where the two are equal or
// either is NaN), so -0 of zeros of both signs and a NaN where either is one. On x86 the scalar
// instructions themselves, so that a subnormal is read as zero and the result flushed where the
// thread says so, exactly as in the vector lanes: a row's extreme may not depend on whether a
// lane or a tail met its subnormal (float_environment.h; XLA flushes them, JAX's
// max([1e-45] * 3) is 0).
inline float min_or(float a, float b) {
#ifdef SPMD_EXTREMES_AVX2
  const __m128 x = _mm_set_ss(a), y = _mm_set_ss(b);
  return _mm_cvtss_f32(_mm_or_ps(_mm_min_ss(x, y), _mm_min_ss(y, x)));
#else
  const float m = a < b ? a : b, n = b < a ? b : a;
  return std::bit_cast<float>(std::bit_cast<uint32_t>(m) | std::bit_cast<uint32_t>(n));
#endif
}

inline double min_or(double a, double b) {
#ifdef SPMD_EXTREMES_AVX2
  const __m128d x = _mm_set_sd(a), y = _mm_set_sd(b);
  return _mm_cvtsd_f64(_mm_or_pd(_mm_min_sd(x, y), _mm_min_sd(y, x)));
#else
  const double m = a < b ? a : b, n = b < a ? b : a;
  return std::bit_cast<double>(std::bit_cast<uint64_t>(m) | std::bit_cast<uint64_t>(n));
#endif
}

// max (as the negated minimum of the negated values) or min, by min_or.
template <class F>
F fold_one(bool maximum, F a, F b) {
  return maximum ? flip(min_or(flip(a), flip(b))) : min_or(a, b);
}

template <class F>
F extreme_scalar(bool maximum, const F* x, int64_t n) {
  F acc = x[0];
  for (int64_t i = 1; i < n; ++i) acc = fold_one(maximum, acc, x[i]);
  return std::isnan(acc) ? std::numeric_limits<F>::quiet_NaN() : acc;
}

template <class F>
void fold_extremes_scalar(bool maximum, F* acc, const F* row, int64_t width) {
  for (int64_t j = 0; j < width; ++j) acc[j] = fold_one(maximum, acc[j], row[j]);
}

template <class F>
void fold_extreme_rows_scalar(bool maximum, F* acc, const F* rows, int64_t count, int64_t stride,
                              int64_t width) {
  for (int64_t r = 0; r < count; ++r) fold_extremes_scalar(maximum, acc, rows + r * stride, width);
}

// Whether `x` (the element at a later index) replaces `best` as the first maximum.
template <class F>
bool replaces(F x, F best) {
  return x > best || (std::isnan(x) && !std::isnan(best));
}

template <class F>
int64_t first_max_scalar(const F* x, int64_t n) {
  int64_t index = 0;
  for (int64_t i = 1; i < n; ++i) {
    if (replaces(x[i], x[index])) index = i;
  }
  return index;
}

template <class F>
void fold_first_max_scalar(F* best, int32_t* index, const F* row, int64_t width, int32_t r) {
  for (int64_t j = 0; j < width; ++j) {
    if (replaces(row[j], best[j])) {
      best[j] = row[j];
      index[j] = r;
    }
  }
}

#ifdef SPMD_EXTREMES_AVX2
// AVX's float32 and float64 lanes, with an integer lane of the same width beside each value for
// argmax's passes.
struct ExtremeLanesF32 {
  using F = float;
  using P = __m256;
  using Index = int32_t;
  static constexpr int64_t kLanes = 8;
  [[gnu::target("avx2")]] static P load(const F* p) { return _mm256_loadu_ps(p); }
  [[gnu::target("avx2")]] static void store(F* p, P v) { _mm256_storeu_ps(p, v); }
  // a > b ? a : b: b where they are equal or either is NaN (maxps).
  [[gnu::target("avx2")]] static P max(P a, P b) { return _mm256_max_ps(a, b); }
  [[gnu::target("avx2")]] static P min(P a, P b) { return _mm256_min_ps(a, b); }
  [[gnu::target("avx2")]] static P eq(P a, P b) { return _mm256_cmp_ps(a, b, _CMP_EQ_OQ); }
  [[gnu::target("avx2")]] static P gt(P a, P b) { return _mm256_cmp_ps(a, b, _CMP_GT_OQ); }
  [[gnu::target("avx2")]] static P nan(P a) { return _mm256_cmp_ps(a, a, _CMP_UNORD_Q); }
  [[gnu::target("avx2")]] static P both(P a, P b) { return _mm256_and_ps(a, b); }
  [[gnu::target("avx2")]] static P either(P a, P b) { return _mm256_or_ps(a, b); }
  [[gnu::target("avx2")]] static P first_not_second(P a, P b) { return _mm256_andnot_ps(b, a); }
  // mask ? a : b, lane by lane.
  [[gnu::target("avx2")]] static P select(P mask, P a, P b) { return _mm256_blendv_ps(b, a, mask); }
  [[gnu::target("avx2")]] static bool any(P mask) { return _mm256_movemask_ps(mask) != 0; }
  [[gnu::target("avx2")]] static P set1(F v) { return _mm256_set1_ps(v); }
  // p[0], p[stride], … p[7 * stride].
  [[gnu::target("avx2")]] static P gather(const F* p, int32_t stride) {
    const __m256i at =
        _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), _mm256_set1_epi32(stride));
    const __m256 all = _mm256_castsi256_ps(_mm256_set1_epi32(-1));
    return _mm256_mask_i32gather_ps(_mm256_setzero_ps(), p, at, all, sizeof(F));
  }
  [[gnu::target("avx2")]] static F first(P v) { return _mm256_cvtss_f32(v); }
  [[gnu::target("avx2")]] static P swap_halves(P v) { return _mm256_permute2f128_ps(v, v, 1); }
  [[gnu::target("avx2")]] static P swap_pairs(P v) { return _mm256_permute_ps(v, 0x4e); }
  [[gnu::target("avx2")]] static P swap_neighbours(P v) { return _mm256_permute_ps(v, 0xb1); }
  [[gnu::target("avx2")]] static P flip(P a, P bits) { return _mm256_xor_ps(a, bits); }
  [[gnu::target("avx2")]] static P unordered(P a, P b) { return _mm256_cmp_ps(a, b, _CMP_UNORD_Q); }
  // replaces() lane by lane, in two comparisons: x > b or x NaN is "not x <= b" (true where
  // either is NaN), and b NaN is never replaced.
  [[gnu::target("avx2")]] static P replaces(P x, P b) {
    return _mm256_and_ps(_mm256_cmp_ps(x, b, _CMP_NLE_UQ), _mm256_cmp_ps(b, b, _CMP_ORD_Q));
  }
  // Integer lanes, carried in the float type for select().
  [[gnu::target("avx2")]] static P integers(Index v) {
    return _mm256_castsi256_ps(_mm256_set1_epi32(v));
  }
  [[gnu::target("avx2")]] static P add_integers(P a, P b) {
    return _mm256_castsi256_ps(_mm256_add_epi32(_mm256_castps_si256(a), _mm256_castps_si256(b)));
  }
  [[gnu::target("avx2")]] static void store_integers(Index* p, P v) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), _mm256_castps_si256(v));
  }
};

struct ExtremeLanesF64 {
  using F = double;
  using P = __m256d;
  using Index = int64_t;
  static constexpr int64_t kLanes = 4;
  [[gnu::target("avx2")]] static P load(const F* p) { return _mm256_loadu_pd(p); }
  [[gnu::target("avx2")]] static void store(F* p, P v) { _mm256_storeu_pd(p, v); }
  [[gnu::target("avx2")]] static P max(P a, P b) { return _mm256_max_pd(a, b); }
  [[gnu::target("avx2")]] static P min(P a, P b) { return _mm256_min_pd(a, b); }
  [[gnu::target("avx2")]] static P eq(P a, P b) { return _mm256_cmp_pd(a, b, _CMP_EQ_OQ); }
  [[gnu::target("avx2")]] static P gt(P a, P b) { return _mm256_cmp_pd(a, b, _CMP_GT_OQ); }
  [[gnu::target("avx2")]] static P nan(P a) { return _mm256_cmp_pd(a, a, _CMP_UNORD_Q); }
  [[gnu::target("avx2")]] static P both(P a, P b) { return _mm256_and_pd(a, b); }
  [[gnu::target("avx2")]] static P either(P a, P b) { return _mm256_or_pd(a, b); }
  [[gnu::target("avx2")]] static P first_not_second(P a, P b) { return _mm256_andnot_pd(b, a); }
  [[gnu::target("avx2")]] static P select(P mask, P a, P b) { return _mm256_blendv_pd(b, a, mask); }
  [[gnu::target("avx2")]] static bool any(P mask) { return _mm256_movemask_pd(mask) != 0; }
  [[gnu::target("avx2")]] static P set1(F v) { return _mm256_set1_pd(v); }
  // p[0], p[stride], p[2 * stride], p[3 * stride].
  [[gnu::target("avx2")]] static P gather(const F* p, int32_t stride) {
    const __m128i at = _mm_mullo_epi32(_mm_setr_epi32(0, 1, 2, 3), _mm_set1_epi32(stride));
    // The masked form, from zeros: GCC 12 warns that the plain one's undefined source is used.
    const __m256d all = _mm256_castsi256_pd(_mm256_set1_epi64x(-1));
    return _mm256_mask_i32gather_pd(_mm256_setzero_pd(), p, at, all, sizeof(F));
  }
  [[gnu::target("avx2")]] static F first(P v) { return _mm256_cvtsd_f64(v); }
  [[gnu::target("avx2")]] static P swap_halves(P v) { return _mm256_permute2f128_pd(v, v, 1); }
  [[gnu::target("avx2")]] static P swap_neighbours(P v) { return _mm256_permute_pd(v, 0x5); }
  [[gnu::target("avx2")]] static P flip(P a, P bits) { return _mm256_xor_pd(a, bits); }
  [[gnu::target("avx2")]] static P unordered(P a, P b) { return _mm256_cmp_pd(a, b, _CMP_UNORD_Q); }
  [[gnu::target("avx2")]] static P integers(Index v) {
    return _mm256_castsi256_pd(_mm256_set1_epi64x(v));
  }
  [[gnu::target("avx2")]] static P add_integers(P a, P b) {
    return _mm256_castsi256_pd(_mm256_add_epi64(_mm256_castpd_si256(a), _mm256_castpd_si256(b)));
  }
  [[gnu::target("avx2")]] static void store_integers(Index* p, P v) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), _mm256_castpd_si256(v));
  }
};

// The minimum of two vectors with NaN and signed zeros as fold_one's, in three instructions:
// minps gives its second operand where the two are equal or either is NaN, so the OR of both
// orders is the minimum where they differ, -0 of two zeros of different signs, and a NaN (all
// exponent bits, the quiet bit) where either is one.
template <class V>
[[gnu::target("avx2"), gnu::always_inline]] inline typename V::P min_lanes(typename V::P a,
                                                                           typename V::P b) {
  return V::either(V::min(a, b), V::min(b, a));
}

// min_lanes of every lane of v, in lane 0 (and the others): halves, then pairs, then neighbours
// swapped and folded, in registers (a row's lanes stored and folded one by one cost about as
// much as a 512-element row's loads).
template <class V>
[[gnu::target("avx2"), gnu::always_inline]] inline typename V::P min_across(typename V::P v) {
  v = min_lanes<V>(v, V::swap_halves(v));
  if constexpr (V::kLanes == 8) v = min_lanes<V>(v, V::swap_pairs(v));
  return min_lanes<V>(v, V::swap_neighbours(v));
}

// Four vectors of lanes at a time, each folded by min_lanes; a maximum as the minimum of the
// negated values (-max(x) = min(-x), +0 of zeros of both signs). The tail as the last four
// vectors again, then the lanes across; a NaN anywhere makes the result NaN.
template <class V, bool kMaximum>
[[gnu::target("avx2")]] typename V::F extreme_avx2(const typename V::F* x, int64_t n) {
  using F = typename V::F;
  constexpr int64_t kStep = 4 * V::kLanes;
  if (n < kStep) return extreme_scalar(kMaximum, x, n);
  const auto sign = V::set1(kMaximum ? F(-0.0) : F(0.0));  // XOR: negation for a maximum
  typename V::P acc[4];
  for (int k = 0; k < 4; ++k) acc[k] = V::flip(V::load(x + k * V::kLanes), sign);
  int64_t i = kStep;
  for (; i + kStep <= n; i += kStep) {
    for (int k = 0; k < 4; ++k) {
      acc[k] = min_lanes<V>(acc[k], V::flip(V::load(x + i + k * V::kLanes), sign));
    }
  }
  if (i <
      n) {  // the last four vectors again, overlapping: folding an element twice changes nothing
    for (int k = 0; k < 4; ++k) {
      acc[k] = min_lanes<V>(acc[k], V::flip(V::load(x + n - kStep + k * V::kLanes), sign));
    }
  }
  const auto all = min_lanes<V>(min_lanes<V>(acc[0], acc[1]), min_lanes<V>(acc[2], acc[3]));
  const F result = V::first(V::flip(min_across<V>(all), sign));
  return std::isnan(result) ? std::numeric_limits<F>::quiet_NaN() : result;
}

// extreme_scalar of rows shorter than two vectors, kLanes rows at a time: column j of the kLanes
// rows gathered into one vector and folded by min_lanes a column at a time, so that each lane
// ends with its row's extreme (a NaN made the default quiet NaN in the lanes); the rows after the
// last whole group one by one. A call of extreme_scalar a row spent more on the call and its
// scalar folds than on the row: jnp.max over the last axis of (262144, 7) took 0.74 ms against
// JAX's 0.38.
template <class V, bool kMaximum>
[[gnu::target("avx2")]] void short_rows_avx2(const typename V::F* x, int64_t count, int64_t n,
                                             int32_t stride, typename V::F* out) {
  using F = typename V::F;
  constexpr int64_t kLanes = V::kLanes;
  const auto sign = V::set1(kMaximum ? F(-0.0) : F(0.0));
  const auto quiet_nan = V::set1(std::numeric_limits<F>::quiet_NaN());
  int64_t r = 0;
  for (; r + kLanes <= count; r += kLanes) {
    const F* rows = x + r * stride;
    auto acc = V::flip(V::gather(rows, stride), sign);
    for (int64_t j = 1; j < n; ++j) {
      acc = min_lanes<V>(acc, V::flip(V::gather(rows + j, stride), sign));
    }
    acc = V::flip(acc, sign);
    V::store(out + r, V::select(V::nan(acc), quiet_nan, acc));
  }
  for (; r < count; ++r) out[r] = extreme_scalar(kMaximum, x + r * stride, n);
}

// first_max_scalar of short rows, kLanes rows at a time: column j of the rows gathered into one
// vector and compared with the best so far, lane by lane, by `replaces` (a NaN where the best is
// none, or a greater value), the column's number kept beside each best; the rows after the last
// whole group one by one.
template <class V>
[[gnu::target("avx2")]] void first_max_short_rows_avx2(const typename V::F* x, int64_t count,
                                                       int64_t n, int32_t stride, int32_t* out) {
  using Index = typename V::Index;
  constexpr int64_t kLanes = V::kLanes;
  alignas(32) Index lanes[kLanes];
  int64_t r = 0;
  for (; r + kLanes <= count; r += kLanes) {
    const typename V::F* rows = x + r * stride;
    auto best = V::gather(rows, stride);
    auto index = V::integers(0);
    for (int64_t j = 1; j < n; ++j) {
      const auto v = V::gather(rows + j, stride);
      const auto replace = V::either(V::gt(v, best), V::first_not_second(V::nan(v), V::nan(best)));
      best = V::select(replace, v, best);
      index = V::select(replace, V::integers(static_cast<Index>(j)), index);
    }
    V::store_integers(lanes, index);
    for (int64_t i = 0; i < kLanes; ++i) out[r + i] = static_cast<int32_t>(lanes[i]);
  }
  for (; r < count; ++r) out[r] = static_cast<int32_t>(first_max_scalar(x + r * stride, n));
}

// extreme_avx2 of four rows at once, `stride` apart, each over two vectors of lanes a step (the
// tail as each row's last two vectors again); the other rows one by one.
template <class V, bool kMaximum>
[[gnu::target("avx2")]] void extremes_of_rows_avx2(const typename V::F* x, int64_t count, int64_t n,
                                                   int64_t stride, typename V::F* out) {
  using F = typename V::F;
  constexpr int64_t kStep = 2 * V::kLanes;
  constexpr int kRows = 4;
  int64_t r = 0;
  if (n >= kStep) {
    const auto sign = V::set1(kMaximum ? F(-0.0) : F(0.0));
    for (; r + kRows <= count; r += kRows) {
      const F* row[kRows];
      typename V::P acc[kRows][2];
      for (int k = 0; k < kRows; ++k) {
        row[k] = x + (r + k) * stride;
        for (int h = 0; h < 2; ++h) acc[k][h] = V::flip(V::load(row[k] + h * V::kLanes), sign);
      }
      // The last step overlaps the one before it: folding an element twice changes nothing.
      for (int64_t i = kStep; i < n; i += kStep) {
        const int64_t at = std::min(i, n - kStep);
        for (int k = 0; k < kRows; ++k) {
          for (int h = 0; h < 2; ++h) {
            acc[k][h] =
                min_lanes<V>(acc[k][h], V::flip(V::load(row[k] + at + h * V::kLanes), sign));
          }
        }
      }
      for (int k = 0; k < kRows; ++k) {
        const F result = V::first(V::flip(min_across<V>(min_lanes<V>(acc[k][0], acc[k][1])), sign));
        out[r + k] = std::isnan(result) ? std::numeric_limits<F>::quiet_NaN() : result;
      }
    }
  }
  for (; r < count; ++r) out[r] = extreme_avx2<V, kMaximum>(x + r * stride, n);
}

// fold_one in lanes: min_lanes, on negated values for a maximum.
template <class V, bool kMaximum>
[[gnu::target("avx2"), gnu::always_inline]] inline typename V::P fold_lanes(typename V::P a,
                                                                            typename V::P x) {
  if constexpr (!kMaximum) return min_lanes<V>(a, x);
  const auto sign = V::set1(typename V::F(-0.0));
  return V::flip(min_lanes<V>(V::flip(a, sign), V::flip(x, sign)), sign);
}

template <class V, bool kMaximum>
[[gnu::target("avx2")]] void fold_extremes_avx2(typename V::F* acc, const typename V::F* row,
                                                int64_t width) {
  int64_t j = 0;
  for (; j + V::kLanes <= width; j += V::kLanes) {
    V::store(acc + j, fold_lanes<V, kMaximum>(V::load(acc + j), V::load(row + j)));
  }
  fold_extremes_scalar(kMaximum, acc + j, row + j, width - j);
}

template <class V, bool kMaximum>
[[gnu::target("avx2")]] void fold_extreme_rows_avx2(typename V::F* acc, const typename V::F* rows,
                                                    int64_t count, int64_t stride, int64_t width) {
  int64_t r = 0;
  for (; r + 4 <= count; r += 4) {
    const auto* row = rows + r * stride;
    int64_t j = 0;
    for (; j + V::kLanes <= width; j += V::kLanes) {
      auto a = V::load(acc + j);
      for (int k = 0; k < 4; ++k) a = fold_lanes<V, kMaximum>(a, V::load(row + k * stride + j));
      V::store(acc + j, a);
    }
    for (int k = 0; k < 4; ++k) {
      fold_extremes_scalar(kMaximum, acc + j, row + k * stride + j, width - j);
    }
  }
  for (; r < count; ++r) fold_extremes_avx2<V, kMaximum>(acc, rows + r * stride, width);
}

// Four vectors of (value, pass) lanes, each lane keeping its first maximum and the pass that
// found it (the element's index is pass * 4 lanes' worth + the lane), NaN noted apart: a row
// with a NaN is scanned again for its first. Then the lanes' first maximum (the smallest index
// among equal values), then the scalar tail after them.
template <class V>
[[gnu::target("avx2")]] int64_t first_max_avx2(const typename V::F* x, int64_t n) {
  using F = typename V::F;
  using Index = typename V::Index;
  constexpr int64_t kStep = 4 * V::kLanes;
  if (n < 2 * kStep || n / kStep > std::numeric_limits<Index>::max()) {
    return first_max_scalar(x, n);
  }
  typename V::P best[4], pass[4];
  for (int k = 0; k < 4; ++k) {
    best[k] = V::load(x + k * V::kLanes);
    pass[k] = V::integers(0);
  }
  auto nan = V::either(V::unordered(best[0], best[1]), V::unordered(best[2], best[3]));
  auto at = V::integers(1);
  const auto one = V::integers(1);
  int64_t i = kStep;
  for (; i + kStep <= n; i += kStep) {
    typename V::P v[4];
    for (int k = 0; k < 4; ++k) {
      v[k] = V::load(x + i + k * V::kLanes);
      const auto take = V::gt(v[k], best[k]);
      best[k] = V::select(take, v[k], best[k]);
      pass[k] = V::select(take, at, pass[k]);
    }
    nan = V::either(nan, V::either(V::unordered(v[0], v[1]), V::unordered(v[2], v[3])));
    at = V::add_integers(at, one);
  }
  if (V::any(nan)) return first_max_scalar(x, n);
  F values[kStep];
  Index passes[kStep];
  for (int k = 0; k < 4; ++k) {
    V::store(values + k * V::kLanes, best[k]);
    V::store_integers(passes + k * V::kLanes, pass[k]);
  }
  auto index = [&](int64_t lane) { return int64_t{passes[lane]} * kStep + lane; };
  int64_t lane = 0;  // the lane holding the first maximum of the lanes
  for (int64_t l = 1; l < kStep; ++l) {
    if (values[l] > values[lane] || (values[l] == values[lane] && index(l) < index(lane))) {
      lane = l;
    }
  }
  int64_t result = index(lane);
  if (i < n) {
    const int64_t tail = i + first_max_scalar(x + i, n - i);
    if (replaces(x[tail], x[result])) result = tail;
  }
  return result;
}

// fold_first_max_scalar in float32 lanes (the indices are int32 lanes beside them).
[[gnu::target("avx2")]] void fold_first_max_avx2(float* best, int32_t* index, const float* row,
                                                 int64_t width, int32_t r) {
  using V = ExtremeLanesF32;
  const auto at = _mm256_castsi256_ps(_mm256_set1_epi32(r));
  int64_t j = 0;
  for (; j + V::kLanes <= width; j += V::kLanes) {
    const auto b = V::load(best + j), x = V::load(row + j);
    const auto take = V::replaces(x, b);
    V::store(best + j, V::select(take, x, b));
    auto* slot = reinterpret_cast<__m256i*>(index + j);
    const auto old = _mm256_castsi256_ps(_mm256_loadu_si256(slot));
    _mm256_storeu_si256(slot, _mm256_castps_si256(V::select(take, at, old)));
  }
  fold_first_max_scalar(best + j, index + j, row + j, width - j, r);
}

// fold_first_max_avx2 of `count` rows in turn, row k at rows + k * stride numbered first + k:
// four rows per pass, each column's best value and index kept in registers across them (the same
// comparisons in the same order), so that a pass reads four rows' streams at once.
[[gnu::target("avx2")]] void fold_first_max_rows_avx2(float* best, int32_t* index,
                                                      const float* rows, int64_t count,
                                                      int64_t stride, int64_t width,
                                                      int32_t first) {
  using V = ExtremeLanesF32;
  int64_t r = 0;
  for (; r + 4 <= count; r += 4) {
    const float* row = rows + r * stride;
    V::P at[4];
    for (int k = 0; k < 4; ++k) {
      at[k] = _mm256_castsi256_ps(_mm256_set1_epi32(first + static_cast<int32_t>(r) + k));
    }
    int64_t j = 0;
    for (; j + V::kLanes <= width; j += V::kLanes) {
      auto b = V::load(best + j);
      auto* slot = reinterpret_cast<__m256i*>(index + j);
      auto i = _mm256_castsi256_ps(_mm256_loadu_si256(slot));
      for (int k = 0; k < 4; ++k) {
        const auto x = V::load(row + k * stride + j);
        const auto take = V::replaces(x, b);
        b = V::select(take, x, b);
        i = V::select(take, at[k], i);
      }
      V::store(best + j, b);
      _mm256_storeu_si256(slot, _mm256_castps_si256(i));
    }
    for (int k = 0; k < 4; ++k) {
      fold_first_max_scalar(best + j, index + j, row + k * stride + j, width - j,
                            first + static_cast<int32_t>(r) + k);
    }
  }
  for (; r < count; ++r) {
    fold_first_max_avx2(best, index, rows + r * stride, width, first + static_cast<int32_t>(r));
  }
}

bool extremes_avx2_runs() {
  static const bool runs = __builtin_cpu_supports("avx2");
  return runs;
}
#endif

// acc[j] = op(acc[j], row[j]) for each of `count` rows in turn, row r at rows + r * stride: four
// rows per pass over acc (a quarter of its loads and stores, four streams of reads at once), the
// same operations in the same order per element. acc overlaps no row (ivdep: no overlap test
// around the vector loop).
template <class T, class Op>
[[gnu::always_inline]] inline void fold_rows_four_at_a_time(T* acc, const T* rows, int64_t count,
                                                            int64_t stride, int64_t width, Op op) {
  int64_t r = 0;
  for (; r + 4 <= count; r += 4) {
    const T* a = rows + r * stride;
    const T* b = a + stride;
    const T* c = b + stride;
    const T* d = c + stride;
#pragma GCC ivdep
    for (int64_t j = 0; j < width; ++j) acc[j] = op(op(op(op(acc[j], a[j]), b[j]), c[j]), d[j]);
  }
  for (; r < count; ++r) {
    const T* row = rows + r * stride;
#pragma GCC ivdep
    for (int64_t j = 0; j < width; ++j) acc[j] = op(acc[j], row[j]);
  }
}

template <class T>
[[gnu::always_inline]] inline void fold_integer_rows_as(bool maximum, std::byte* acc_bytes,
                                                        const std::byte* rows_bytes, int64_t count,
                                                        int64_t stride, int64_t width) {
  auto* acc = reinterpret_cast<T*>(acc_bytes);
  const auto* rows = reinterpret_cast<const T*>(rows_bytes);
  if (maximum) {
    fold_rows_four_at_a_time(acc, rows, count, stride, width,
                             [](T a, T b) { return std::max(a, b); });
  } else {
    fold_rows_four_at_a_time(acc, rows, count, stride, width,
                             [](T a, T b) { return std::min(a, b); });
  }
}

// acc[j] += each row's j-th element, modulo 2^bits (in an unsigned type of at least 32 bits, so
// that no signed sum overflows): exact in any order.
template <class T>
[[gnu::always_inline]] inline void sum_integer_rows_as(std::byte* acc_bytes,
                                                       const std::byte* rows_bytes, int64_t count,
                                                       int64_t stride, int64_t width) {
  using W = std::conditional_t<(sizeof(T) < 4), uint32_t, std::make_unsigned_t<T>>;
  fold_rows_four_at_a_time(reinterpret_cast<T*>(acc_bytes), reinterpret_cast<const T*>(rows_bytes),
                           count, stride, width,
                           [](T a, T b) { return static_cast<T>(W(a) + W(b)); });
}

template <class T>
[[gnu::always_inline]] inline void fold_integer_first_max_as(std::byte* best_bytes, int32_t* index,
                                                             const std::byte* row_bytes,
                                                             int64_t width, int32_t r) {
  auto* best = reinterpret_cast<T*>(best_bytes);
  const auto* row = reinterpret_cast<const T*>(row_bytes);
  for (int64_t j = 0; j < width; ++j) {
    const bool take = row[j] > best[j];
    best[j] = take ? row[j] : best[j];
    index[j] = take ? r : index[j];
  }
}

// One running extreme, which GCC vectorises as a reduction (vpmaxsb and the like: a latency of
// one cycle, so one register keeps up with the loads).
template <class T>
[[gnu::always_inline]] inline T integer_extreme_as(bool maximum, const std::byte* x_bytes,
                                                   int64_t n) {
  const auto* x = reinterpret_cast<const T*>(x_bytes);
  T best = x[0];
  if (maximum) {
    for (int64_t i = 1; i < n; ++i) best = std::max(best, x[i]);
  } else {
    for (int64_t i = 1; i < n; ++i) best = std::min(best, x[i]);
  }
  return best;
}

// Calls f with a null pointer of dtype's integer type (dispatch.h's visit_integer); false, with
// f not called, for another dtype.
template <class F>
[[gnu::always_inline]] inline bool with_integer_type(DType dtype, F f) {
  return visit_integer(dtype, [&](auto zero) {
    f(static_cast<decltype(zero)*>(nullptr));
    return true;
  });
}

}  // namespace

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define SPMD_EXTREMES_CLONES __attribute__((target_clones("arch=x86-64-v3", "default"), flatten))
#else
#define SPMD_EXTREMES_CLONES
#endif

SPMD_EXTREMES_CLONES
bool fold_integer_rows(bool maximum, DType dtype, std::byte* acc, const std::byte* rows,
                       int64_t count, int64_t stride, int64_t width) {
  return with_integer_type(dtype, [&](auto* type) {
    fold_integer_rows_as<std::remove_pointer_t<decltype(type)>>(maximum, acc, rows, count, stride,
                                                                width);
  });
}

SPMD_EXTREMES_CLONES
bool sum_integer_rows(DType dtype, std::byte* acc, const std::byte* rows, int64_t count,
                      int64_t stride, int64_t width) {
  return with_integer_type(dtype, [&](auto* type) {
    sum_integer_rows_as<std::remove_pointer_t<decltype(type)>>(acc, rows, count, stride, width);
  });
}

SPMD_EXTREMES_CLONES
bool fold_integer_first_max(DType dtype, std::byte* best, int32_t* index, const std::byte* row,
                            int64_t width, int32_t r) {
  return with_integer_type(dtype, [&](auto* type) {
    fold_integer_first_max_as<std::remove_pointer_t<decltype(type)>>(best, index, row, width, r);
  });
}

SPMD_EXTREMES_CLONES
bool integer_extreme_of(bool maximum, DType dtype, const std::byte* x, int64_t n, std::byte* out) {
  return with_integer_type(dtype, [&](auto* type) {
    using T = std::remove_pointer_t<decltype(type)>;
    const T best = integer_extreme_as<T>(maximum, x, n);
    std::memcpy(out, &best, sizeof(T));
  });
}

#undef SPMD_EXTREMES_CLONES

namespace portable {
float extreme_of(bool maximum, const float* x, int64_t n) { return extreme_scalar(maximum, x, n); }
double extreme_of(bool maximum, const double* x, int64_t n) {
  return extreme_scalar(maximum, x, n);
}
void fold_extremes(bool maximum, float* acc, const float* row, int64_t width) {
  fold_extremes_scalar(maximum, acc, row, width);
}
void fold_extremes(bool maximum, double* acc, const double* row, int64_t width) {
  fold_extremes_scalar(maximum, acc, row, width);
}
void fold_extreme_rows(bool maximum, float* acc, const float* rows, int64_t count, int64_t stride,
                       int64_t width) {
  fold_extreme_rows_scalar(maximum, acc, rows, count, stride, width);
}
void fold_extreme_rows(bool maximum, double* acc, const double* rows, int64_t count, int64_t stride,
                       int64_t width) {
  fold_extreme_rows_scalar(maximum, acc, rows, count, stride, width);
}
int64_t first_max_of(const float* x, int64_t n) { return first_max_scalar(x, n); }
int64_t first_max_of(const double* x, int64_t n) { return first_max_scalar(x, n); }
void fold_first_max(float* best, int32_t* index, const float* row, int64_t width, int32_t r) {
  fold_first_max_scalar(best, index, row, width, r);
}
void fold_first_max(double* best, int32_t* index, const double* row, int64_t width, int32_t r) {
  fold_first_max_scalar(best, index, row, width, r);
}
void fold_first_max_rows(float* best, int32_t* index, const float* rows, int64_t count,
                         int64_t stride, int64_t width, int32_t first) {
  for (int64_t k = 0; k < count; ++k) {
    fold_first_max_scalar(best, index, rows + k * stride, width, first + static_cast<int32_t>(k));
  }
}
void fold_first_max_rows(double* best, int32_t* index, const double* rows, int64_t count,
                         int64_t stride, int64_t width, int32_t first) {
  for (int64_t k = 0; k < count; ++k) {
    fold_first_max_scalar(best, index, rows + k * stride, width, first + static_cast<int32_t>(k));
  }
}
}  // namespace portable

#ifdef SPMD_EXTREMES_AVX2
namespace {

// Which order reads this machine's rows faster (extremes_of_rows in extremes.h): chosen once per
// process, by the first call of kOrderTuneBytes or more.
std::atomic<RowOrder> chosen_order{RowOrder::kUnknown};
constexpr size_t kOrderTuneBytes = size_t{4} << 20;

template <class V>
typename V::F extreme_dispatch(bool maximum, const typename V::F* x, int64_t n) {
  if (!extremes_avx2_runs()) return portable::extreme_of(maximum, x, n);
  return maximum ? extreme_avx2<V, true>(x, n) : extreme_avx2<V, false>(x, n);
}
// The rows in `order`: four interleaved (extremes_of_rows_avx2), or one after another
// (extreme_avx2 on each).
template <class V>
void rows_in_order(RowOrder order, bool maximum, const typename V::F* x, int64_t count, int64_t n,
                   int64_t stride, typename V::F* out) {
  if (order == RowOrder::kSequential) {
    for (int64_t r = 0; r < count; ++r) {
      out[r] = maximum ? extreme_avx2<V, true>(x + r * stride, n)
                       : extreme_avx2<V, false>(x + r * stride, n);
    }
    return;
  }
  if (maximum) return extremes_of_rows_avx2<V, true>(x, count, n, stride, out);
  extremes_of_rows_avx2<V, false>(x, count, n, stride, out);
}

// The faster order for this call's rows, each timed twice in turn (the same bits either way).
template <class V>
RowOrder timed_order(bool maximum, const typename V::F* x, int64_t count, int64_t n, int64_t stride,
                     typename V::F* out) {
  using Clock = std::chrono::steady_clock;
  Clock::duration best[2] = {Clock::duration::max(), Clock::duration::max()};
  for (int trial = 0; trial < 4; ++trial) {
    const auto order = trial % 2 == 0 ? RowOrder::kInterleaved : RowOrder::kSequential;
    const auto start = Clock::now();
    rows_in_order<V>(order, maximum, x, count, n, stride, out);
    best[trial % 2] = std::min(best[trial % 2], Clock::now() - start);
  }
  return best[1] < best[0] ? RowOrder::kSequential : RowOrder::kInterleaved;
}

// The widest stride apart short rows are gathered from: 8 rows' offsets fit in 32 bits.
constexpr int64_t kShortRowsStride = int64_t{1} << 27;
// The longest rows whose first maxima are gathered a column at a time: beyond, a row's own
// vector loop.
constexpr int64_t kShortFirstMaxRow = 128;

template <class V>
void rows_dispatch(bool maximum, const typename V::F* x, int64_t count, int64_t n, int64_t stride,
                   typename V::F* out) {
  if (!extremes_avx2_runs()) {
    for (int64_t r = 0; r < count; ++r) out[r] = portable::extreme_of(maximum, x + r * stride, n);
    return;
  }
  if (n < 2 * V::kLanes && stride <= kShortRowsStride) {  // neither order, and no timing
    const auto apart = static_cast<int32_t>(stride);
    if (maximum) return short_rows_avx2<V, true>(x, count, n, apart, out);
    return short_rows_avx2<V, false>(x, count, n, apart, out);
  }
  RowOrder order = chosen_order.load(std::memory_order_relaxed);
  const auto bytes = static_cast<size_t>(count * n) * sizeof(typename V::F);
  if (order == RowOrder::kUnknown && bytes >= kOrderTuneBytes) {
    order = timed_order<V>(maximum, x, count, n, stride, out);
    RowOrder unknown = RowOrder::kUnknown;  // the first thread's choice stands
    chosen_order.compare_exchange_strong(unknown, order);
    return;  // `out` holds the last timing's results
  }
  rows_in_order<V>(order == RowOrder::kSequential ? order : RowOrder::kInterleaved, maximum, x,
                   count, n, stride, out);
}
template <class V>
void fold_dispatch(bool maximum, typename V::F* acc, const typename V::F* row, int64_t width) {
  if (!extremes_avx2_runs()) return portable::fold_extremes(maximum, acc, row, width);
  if (maximum) return fold_extremes_avx2<V, true>(acc, row, width);
  fold_extremes_avx2<V, false>(acc, row, width);
}
template <class V>
void fold_rows_dispatch(bool maximum, typename V::F* acc, const typename V::F* rows, int64_t count,
                        int64_t stride, int64_t width) {
  if (!extremes_avx2_runs()) {
    return portable::fold_extreme_rows(maximum, acc, rows, count, stride, width);
  }
  if (maximum) return fold_extreme_rows_avx2<V, true>(acc, rows, count, stride, width);
  fold_extreme_rows_avx2<V, false>(acc, rows, count, stride, width);
}
template <class V>
int64_t first_max_dispatch(const typename V::F* x, int64_t n) {
  return extremes_avx2_runs() ? first_max_avx2<V>(x, n) : portable::first_max_of(x, n);
}
template <class V>
void first_max_rows_dispatch(const typename V::F* x, int64_t count, int64_t n, int64_t stride,
                             int32_t* out) {
  if (extremes_avx2_runs() && n <= kShortFirstMaxRow && stride <= kShortRowsStride) {
    return first_max_short_rows_avx2<V>(x, count, n, static_cast<int32_t>(stride), out);
  }
  for (int64_t r = 0; r < count; ++r) {
    out[r] = static_cast<int32_t>(first_max_dispatch<V>(x + r * stride, n));
  }
}
}  // namespace

float extreme_of(bool maximum, const float* x, int64_t n) {
  return extreme_dispatch<ExtremeLanesF32>(maximum, x, n);
}
double extreme_of(bool maximum, const double* x, int64_t n) {
  return extreme_dispatch<ExtremeLanesF64>(maximum, x, n);
}
RowOrder extremes_row_order() { return chosen_order.load(std::memory_order_relaxed); }

void extremes_of_rows(bool maximum, const float* x, int64_t count, int64_t n, int64_t stride,
                      float* out) {
  rows_dispatch<ExtremeLanesF32>(maximum, x, count, n, stride, out);
}
void extremes_of_rows(bool maximum, const double* x, int64_t count, int64_t n, int64_t stride,
                      double* out) {
  rows_dispatch<ExtremeLanesF64>(maximum, x, count, n, stride, out);
}
void extremes_of_rows_in(RowOrder order, bool maximum, const float* x, int64_t count, int64_t n,
                         int64_t stride, float* out) {
  if (!extremes_avx2_runs()) return extremes_of_rows(maximum, x, count, n, stride, out);
  rows_in_order<ExtremeLanesF32>(order, maximum, x, count, n, stride, out);
}
void extremes_of_rows_in(RowOrder order, bool maximum, const double* x, int64_t count, int64_t n,
                         int64_t stride, double* out) {
  if (!extremes_avx2_runs()) return extremes_of_rows(maximum, x, count, n, stride, out);
  rows_in_order<ExtremeLanesF64>(order, maximum, x, count, n, stride, out);
}
void fold_extremes(bool maximum, float* acc, const float* row, int64_t width) {
  fold_dispatch<ExtremeLanesF32>(maximum, acc, row, width);
}
void fold_extremes(bool maximum, double* acc, const double* row, int64_t width) {
  fold_dispatch<ExtremeLanesF64>(maximum, acc, row, width);
}
void fold_extreme_rows(bool maximum, float* acc, const float* rows, int64_t count, int64_t stride,
                       int64_t width) {
  fold_rows_dispatch<ExtremeLanesF32>(maximum, acc, rows, count, stride, width);
}
void fold_extreme_rows(bool maximum, double* acc, const double* rows, int64_t count, int64_t stride,
                       int64_t width) {
  fold_rows_dispatch<ExtremeLanesF64>(maximum, acc, rows, count, stride, width);
}
int64_t first_max_of(const float* x, int64_t n) {
  return first_max_dispatch<ExtremeLanesF32>(x, n);
}
int64_t first_max_of(const double* x, int64_t n) {
  return first_max_dispatch<ExtremeLanesF64>(x, n);
}
void first_max_of_rows(const float* x, int64_t count, int64_t n, int64_t stride, int32_t* out) {
  first_max_rows_dispatch<ExtremeLanesF32>(x, count, n, stride, out);
}
void first_max_of_rows(const double* x, int64_t count, int64_t n, int64_t stride, int32_t* out) {
  first_max_rows_dispatch<ExtremeLanesF64>(x, count, n, stride, out);
}
void fold_first_max(float* best, int32_t* index, const float* row, int64_t width, int32_t r) {
  if (!extremes_avx2_runs()) return portable::fold_first_max(best, index, row, width, r);
  fold_first_max_avx2(best, index, row, width, r);
}
void fold_first_max(double* best, int32_t* index, const double* row, int64_t width, int32_t r) {
  portable::fold_first_max(best, index, row, width, r);
}
void fold_first_max_rows(float* best, int32_t* index, const float* rows, int64_t count,
                         int64_t stride, int64_t width, int32_t first) {
  if (!extremes_avx2_runs()) {
    return portable::fold_first_max_rows(best, index, rows, count, stride, width, first);
  }
  fold_first_max_rows_avx2(best, index, rows, count, stride, width, first);
}
void fold_first_max_rows(double* best, int32_t* index, const double* rows, int64_t count,
                         int64_t stride, int64_t width, int32_t first) {
  portable::fold_first_max_rows(best, index, rows, count, stride, width, first);
}
#else
float extreme_of(bool maximum, const float* x, int64_t n) {
  return portable::extreme_of(maximum, x, n);
}
void extremes_of_rows(bool maximum, const float* x, int64_t count, int64_t n, int64_t stride,
                      float* out) {
  for (int64_t r = 0; r < count; ++r) out[r] = portable::extreme_of(maximum, x + r * stride, n);
}
void extremes_of_rows(bool maximum, const double* x, int64_t count, int64_t n, int64_t stride,
                      double* out) {
  for (int64_t r = 0; r < count; ++r) out[r] = portable::extreme_of(maximum, x + r * stride, n);
}
RowOrder extremes_row_order() { return RowOrder::kUnknown; }
void extremes_of_rows_in(RowOrder /*order*/, bool maximum, const float* x, int64_t count, int64_t n,
                         int64_t stride, float* out) {
  extremes_of_rows(maximum, x, count, n, stride, out);
}
void extremes_of_rows_in(RowOrder /*order*/, bool maximum, const double* x, int64_t count,
                         int64_t n, int64_t stride, double* out) {
  extremes_of_rows(maximum, x, count, n, stride, out);
}
double extreme_of(bool maximum, const double* x, int64_t n) {
  return portable::extreme_of(maximum, x, n);
}
void fold_extremes(bool maximum, float* acc, const float* row, int64_t width) {
  portable::fold_extremes(maximum, acc, row, width);
}
void fold_extremes(bool maximum, double* acc, const double* row, int64_t width) {
  portable::fold_extremes(maximum, acc, row, width);
}
void fold_extreme_rows(bool maximum, float* acc, const float* rows, int64_t count, int64_t stride,
                       int64_t width) {
  portable::fold_extreme_rows(maximum, acc, rows, count, stride, width);
}
void fold_extreme_rows(bool maximum, double* acc, const double* rows, int64_t count, int64_t stride,
                       int64_t width) {
  portable::fold_extreme_rows(maximum, acc, rows, count, stride, width);
}
int64_t first_max_of(const float* x, int64_t n) { return portable::first_max_of(x, n); }
int64_t first_max_of(const double* x, int64_t n) { return portable::first_max_of(x, n); }
void first_max_of_rows(const float* x, int64_t count, int64_t n, int64_t stride, int32_t* out) {
  for (int64_t r = 0; r < count; ++r) out[r] = int32_t(portable::first_max_of(x + r * stride, n));
}
void first_max_of_rows(const double* x, int64_t count, int64_t n, int64_t stride, int32_t* out) {
  for (int64_t r = 0; r < count; ++r) out[r] = int32_t(portable::first_max_of(x + r * stride, n));
}
void fold_first_max(float* best, int32_t* index, const float* row, int64_t width, int32_t r) {
  portable::fold_first_max(best, index, row, width, r);
}
void fold_first_max(double* best, int32_t* index, const double* row, int64_t width, int32_t r) {
  portable::fold_first_max(best, index, row, width, r);
}
void fold_first_max_rows(float* best, int32_t* index, const float* rows, int64_t count,
                         int64_t stride, int64_t width, int32_t first) {
  portable::fold_first_max_rows(best, index, rows, count, stride, width, first);
}
void fold_first_max_rows(double* best, int32_t* index, const double* rows, int64_t count,
                         int64_t stride, int64_t width, int32_t first) {
  portable::fold_first_max_rows(best, index, rows, count, stride, width, first);
}
#endif

}  // namespace spmd::kernels
