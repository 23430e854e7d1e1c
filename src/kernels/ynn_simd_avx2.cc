// ynn_simd.h's loops in AVX2 with FMA (and F16C, which every AVX2 processor has, for float16
// rows): sixteen lanes as two registers, lanes 0-7 and 8-15. Built with -ffp-contract=off
// (CMakeLists.txt), as ynn_simd_avx512.cc.
#include "kernels/ynn_simd.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#include <immintrin.h>

#include <algorithm>
#include <limits>

#include "kernels/ynn_math.h"

namespace spmd::kernels {
namespace {

#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c")

struct V {
  __m256 lo, hi;
};

// Lanes [0, count) of eight, as a mask for maskload / maskstore (count clamped to [0, 8]).
[[gnu::always_inline]] inline __m256i first_lanes(int64_t count) {
  const auto n = static_cast<int>(std::clamp<int64_t>(count, 0, 8));
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

// Both halves through one operation.
template <class F>
[[gnu::always_inline]] inline V each(V a, V b, F f) {
  return {f(a.lo, b.lo), f(a.hi, b.hi)};
}

[[gnu::always_inline]] inline V zero() { return {_mm256_setzero_ps(), _mm256_setzero_ps()}; }
[[gnu::always_inline]] inline V splat(float f) { return {_mm256_set1_ps(f), _mm256_set1_ps(f)}; }
[[gnu::always_inline]] inline V load(const float* p) {
  return {_mm256_loadu_ps(p), _mm256_loadu_ps(p + 8)};
}
[[gnu::always_inline]] inline V load_first(const float* p, int64_t count) {
  return {_mm256_maskload_ps(p, first_lanes(count)),
          _mm256_maskload_ps(p + 8, first_lanes(count - 8))};
}
[[gnu::always_inline]] inline void store_first(float* p, int64_t count, V a) {
  _mm256_maskstore_ps(p, first_lanes(count), a.lo);
  _mm256_maskstore_ps(p + 8, first_lanes(count - 8), a.hi);
}
[[gnu::always_inline]] inline void store16(float* p, V a) {
  _mm256_storeu_ps(p, a.lo);
  _mm256_storeu_ps(p + 8, a.hi);
}
[[gnu::always_inline]] inline V add(V a, V b) {
  return each(a, b, [](__m256 x, __m256 y) { return _mm256_add_ps(x, y); });
}
[[gnu::always_inline]] inline V sub(V a, V b) {
  return each(a, b, [](__m256 x, __m256 y) { return _mm256_sub_ps(x, y); });
}
[[gnu::always_inline]] inline V mul(V a, V b) {
  return each(a, b, [](__m256 x, __m256 y) { return _mm256_mul_ps(x, y); });
}
[[gnu::always_inline]] inline V div(V a, V b) {
  return each(a, b, [](__m256 x, __m256 y) { return _mm256_div_ps(x, y); });
}
[[gnu::always_inline]] inline V fmadd(V a, V b, V c) {
  return {_mm256_fmadd_ps(a.lo, b.lo, c.lo), _mm256_fmadd_ps(a.hi, b.hi, c.hi)};
}
[[gnu::always_inline]] inline V vmin(V a, V b) {
  return each(a, b, [](__m256 x, __m256 y) { return _mm256_min_ps(x, y); });
}
[[gnu::always_inline]] inline V vmax(V a, V b) {
  return each(a, b, [](__m256 x, __m256 y) { return _mm256_max_ps(x, y); });
}
// |x| as a mask of all but the sign bit.
[[gnu::always_inline]] inline __m256 magnitude(__m256 x) {
  return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), x);
}
[[gnu::always_inline]] inline V where_nan(V x, V a) {
  return each(x, a, [](__m256 t, __m256 v) {
    return _mm256_blendv_ps(v, t, _mm256_cmp_ps(t, t, _CMP_UNORD_Q));
  });
}
[[gnu::always_inline]] inline V where_infinite(V t, V a) {
  return each(t, a, [](__m256 s, __m256 v) {
    const __m256 inf = _mm256_set1_ps(std::numeric_limits<float>::infinity());
    return _mm256_blendv_ps(v, s, _mm256_cmp_ps(magnitude(s), inf, _CMP_EQ_OQ));
  });
}
[[gnu::always_inline]] inline V finite_or_zero(V e) {
  return each(e, e, [](__m256 x, __m256) {
    const __m256 inf = _mm256_set1_ps(std::numeric_limits<float>::infinity());
    return _mm256_and_ps(x, _mm256_cmp_ps(magnitude(x), inf, _CMP_LT_OQ));
  });
}
[[gnu::always_inline]] inline V exponent_field(V a) {
  return each(a, a, [](__m256 x, __m256) {
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_castps_si256(x), 23));
  });
}
// float(bits >> 23): a positive float's exponent field.
[[gnu::always_inline]] inline V field_as_float(V a) {
  return each(a, a, [](__m256 x, __m256) {
    return _mm256_cvtepi32_ps(_mm256_srli_epi32(_mm256_castps_si256(x), 23));
  });
}
// The mantissa under 1.0's exponent.
[[gnu::always_inline]] inline V mantissa_one(V a) {
  return each(a, a, [](__m256 x, __m256) {
    const __m256i bits = _mm256_and_si256(_mm256_castps_si256(x), _mm256_set1_epi32(0x007fffff));
    return _mm256_castsi256_ps(_mm256_or_si256(bits, _mm256_set1_epi32(0x3f800000)));
  });
}
// t where a < b (a == b, a > b: ordered, false with a NaN) else f.
template <int kPredicate>
[[gnu::always_inline]] inline V where_cmp(V a, V b, V t, V f) {
  return {_mm256_blendv_ps(f.lo, t.lo, _mm256_cmp_ps(a.lo, b.lo, kPredicate)),
          _mm256_blendv_ps(f.hi, t.hi, _mm256_cmp_ps(a.hi, b.hi, kPredicate))};
}
[[gnu::always_inline]] inline V where_lt(V a, V b, V t, V f) {
  return where_cmp<_CMP_LT_OQ>(a, b, t, f);
}
[[gnu::always_inline]] inline V where_eq(V a, V b, V t, V f) {
  return where_cmp<_CMP_EQ_OQ>(a, b, t, f);
}
[[gnu::always_inline]] inline V where_gt(V a, V b, V t, V f) {
  return where_cmp<_CMP_GT_OQ>(a, b, t, f);
}
[[gnu::always_inline]] inline V zero_past(V a, int64_t count) {
  return {_mm256_and_ps(a.lo, _mm256_castsi256_ps(first_lanes(count))),
          _mm256_and_ps(a.hi, _mm256_castsi256_ps(first_lanes(count - 8)))};
}
// Eight halves' bits widened: float16 by vcvtph2ps (F16C), bfloat16 moved to the top of each
// 32-bit lane.
[[gnu::always_inline]] inline __m256 half8(bool bfloat16, const uint16_t* p) {
  const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  if (!bfloat16) return _mm256_cvtph_ps(h);
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
}
[[gnu::always_inline]] inline V load_half(bool bfloat16, const uint16_t* p) {
  return {half8(bfloat16, p), half8(bfloat16, p + 8)};
}

#include "kernels/ynn_simd_body.inc"

#pragma GCC pop_options

// F16C: CPUID leaf 1, ECX bit 29 (clang's __builtin_cpu_supports does not name it).
bool has_f16c() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  return __get_cpuid(1, &eax, &ebx, &ecx, &edx) != 0 && (ecx & (1u << 29)) != 0;
}

}  // namespace

const YnnLoops* ynn_loops_avx2() {
  static const YnnLoops loops{"avx2", plain_row_sum, unary_each, unary_row_sum, half_row_sum};
  static const bool supported =
      __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && has_f16c();
  return supported ? &loops : nullptr;
}

}  // namespace spmd::kernels

#else

namespace spmd::kernels {
// F16C: CPUID leaf 1, ECX bit 29 (clang's __builtin_cpu_supports does not name it).
bool has_f16c() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  return __get_cpuid(1, &eax, &ebx, &ecx, &edx) != 0 && (ecx & (1u << 29)) != 0;
}

const YnnLoops* ynn_loops_avx2() { return nullptr; }
}  // namespace spmd::kernels

#endif
