// ynn_simd.h's loops in AVX-512 F: sixteen lanes, one register. Built with -ffp-contract=off
// (CMakeLists.txt): a product and the sum after it stay two roundings, as in the scalar formulas.
#include "kernels/ynn_simd.h"

#if defined(__x86_64__) && defined(__GNUC__)
// GCC 12's AVX-512 intrinsics pass _mm512_undefined_ps() as the merge source no lane takes, and
// -O3 warns that it is, or may be, used uninitialized (as xla_exp_avx512.cc).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>

#include <algorithm>
#include <limits>

#include "kernels/ynn_math.h"

namespace spmd::kernels {
namespace {

#pragma GCC push_options
#pragma GCC target("avx512f")

struct V {
  __m512 v;
};

[[gnu::always_inline]] inline __mmask16 first_lanes(int64_t count) {
  return count >= 16 ? __mmask16{0xffff} : static_cast<__mmask16>((1u << count) - 1u);
}

[[gnu::always_inline]] inline V zero() { return {_mm512_setzero_ps()}; }
[[gnu::always_inline]] inline V splat(float f) { return {_mm512_set1_ps(f)}; }
[[gnu::always_inline]] inline V load(const float* p) { return {_mm512_loadu_ps(p)}; }
[[gnu::always_inline]] inline V load_first(const float* p, int64_t count) {
  return {_mm512_maskz_loadu_ps(first_lanes(count), p)};
}
[[gnu::always_inline]] inline void store_first(float* p, int64_t count, V a) {
  _mm512_mask_storeu_ps(p, first_lanes(count), a.v);
}
[[gnu::always_inline]] inline void store16(float* p, V a) { _mm512_storeu_ps(p, a.v); }
[[gnu::always_inline]] inline V add(V a, V b) { return {_mm512_add_ps(a.v, b.v)}; }
[[gnu::always_inline]] inline V sub(V a, V b) { return {_mm512_sub_ps(a.v, b.v)}; }
[[gnu::always_inline]] inline V mul(V a, V b) { return {_mm512_mul_ps(a.v, b.v)}; }
[[gnu::always_inline]] inline V div(V a, V b) { return {_mm512_div_ps(a.v, b.v)}; }
[[gnu::always_inline]] inline V fmadd(V a, V b, V c) { return {_mm512_fmadd_ps(a.v, b.v, c.v)}; }
[[gnu::always_inline]] inline V vmin(V a, V b) { return {_mm512_min_ps(a.v, b.v)}; }
[[gnu::always_inline]] inline V vmax(V a, V b) { return {_mm512_max_ps(a.v, b.v)}; }
[[gnu::always_inline]] inline V where_nan(V x, V a) {
  return {_mm512_mask_mov_ps(a.v, _mm512_cmp_ps_mask(x.v, x.v, _CMP_UNORD_Q), x.v)};
}
[[gnu::always_inline]] inline V where_infinite(V t, V a) {
  const __m512 inf = _mm512_set1_ps(std::numeric_limits<float>::infinity());
  return {_mm512_mask_mov_ps(a.v, _mm512_cmp_ps_mask(_mm512_abs_ps(t.v), inf, _CMP_EQ_OQ), t.v)};
}
[[gnu::always_inline]] inline V finite_or_zero(V e) {
  const __m512 inf = _mm512_set1_ps(std::numeric_limits<float>::infinity());
  return {_mm512_maskz_mov_ps(_mm512_cmp_ps_mask(_mm512_abs_ps(e.v), inf, _CMP_LT_OQ), e.v)};
}
[[gnu::always_inline]] inline V exponent_field(V a) {
  return {_mm512_castsi512_ps(_mm512_slli_epi32(_mm512_castps_si512(a.v), 23))};
}
[[gnu::always_inline]] inline V zero_past(V a, int64_t count) {
  return {_mm512_maskz_mov_ps(first_lanes(count), a.v)};
}
// Sixteen halves' bits widened: float16 by vcvtph2ps (AVX-512 F), bfloat16 moved to the top of
// each 32-bit lane.
[[gnu::always_inline]] inline V load_half(bool bfloat16, const uint16_t* p) {
  const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  if (!bfloat16) return {_mm512_cvtph_ps(h)};
  return {_mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16))};
}

// float(bits >> 23): a positive float's exponent field.
[[gnu::always_inline]] inline V field_as_float(V a) {
  return {_mm512_cvtepi32_ps(_mm512_srli_epi32(_mm512_castps_si512(a.v), 23))};
}
// The mantissa under 1.0's exponent.
[[gnu::always_inline]] inline V mantissa_one(V a) {
  const __m512i bits = _mm512_and_si512(_mm512_castps_si512(a.v), _mm512_set1_epi32(0x007fffff));
  return {_mm512_castsi512_ps(_mm512_or_si512(bits, _mm512_set1_epi32(0x3f800000)))};
}
// t where a < b (a == b, a > b: ordered, false with a NaN) else f.
[[gnu::always_inline]] inline V where_lt(V a, V b, V t, V f) {
  return {_mm512_mask_blend_ps(_mm512_cmp_ps_mask(a.v, b.v, _CMP_LT_OQ), f.v, t.v)};
}
[[gnu::always_inline]] inline V where_eq(V a, V b, V t, V f) {
  return {_mm512_mask_blend_ps(_mm512_cmp_ps_mask(a.v, b.v, _CMP_EQ_OQ), f.v, t.v)};
}
[[gnu::always_inline]] inline V where_gt(V a, V b, V t, V f) {
  return {_mm512_mask_blend_ps(_mm512_cmp_ps_mask(a.v, b.v, _CMP_GT_OQ), f.v, t.v)};
}

#include "kernels/ynn_simd_body.inc"

#pragma GCC pop_options

}  // namespace

const YnnLoops* ynn_loops_avx512() {
  static const YnnLoops loops{"avx512f", plain_row_sum, unary_each, unary_row_sum, half_row_sum};
  static const bool supported = __builtin_cpu_supports("avx512f");
  return supported ? &loops : nullptr;
}

}  // namespace spmd::kernels

#else

namespace spmd::kernels {
const YnnLoops* ynn_loops_avx512() { return nullptr; }
}  // namespace spmd::kernels

#endif
