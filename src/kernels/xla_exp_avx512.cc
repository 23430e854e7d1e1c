// xla_exp's formula in AVX-512 intrinsics, step for step (as xla_exp_avx2.cc, sixteen wide).
#include "kernels/xla_exp_avx512.h"

#if defined(__x86_64__) && defined(__GNUC__)
// GCC 12's AVX-512 intrinsics (vmaxps, vminps, vrndscaleps, vextractf64x4 unmasked) pass
// _mm512_undefined_ps() (_mm256_undefined_pd()) as the merge source no lane takes, and -O3
// warns that it is, or may be, used uninitialized.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>

#include <algorithm>
#include <limits>

namespace spmd::kernels {
namespace {

// What follows is built for AVX-512 F, and runs only where the CPU has it (xla_exp_avx512).
#pragma GCC push_options
#pragma GCC target("avx512f")

// xla_exp's constants, sixteen wide.
struct ExpConstants {
  ExpConstants() {}  // defined here, under the pragma: an implicit one would be built without it
  __m512 low = _mm512_set1_ps(-87.8f), high = _mm512_set1_ps(88.8f);
  __m512 n_high = _mm512_set1_ps(127.0f);
  __m512 log2e = _mm512_set1_ps(1.44269504088896341f), half = _mm512_set1_ps(0.5f);
  __m512 ln2_hi = _mm512_set1_ps(-0.693359375f), ln2_lo = _mm512_set1_ps(2.12194440e-4f);
  __m512 p0 = _mm512_set1_ps(1.9875691500e-4f), p1 = _mm512_set1_ps(1.3981999507e-3f);
  __m512 p2 = _mm512_set1_ps(8.3334519073e-3f), p3 = _mm512_set1_ps(4.1665795894e-2f);
  __m512 p4 = _mm512_set1_ps(1.6666665459e-1f), p5 = _mm512_set1_ps(5.0000001201e-1f);
  __m512 one = _mm512_set1_ps(1.0f);
  __m512 smallest = _mm512_set1_ps(std::numeric_limits<float>::min());
  __m512i bias = _mm512_set1_epi32(127);
};

[[gnu::always_inline]] inline __m512 exp16(const ExpConstants& c, __m512 x) {
  // std::max(v, c) is (v < c) ? c : v, which is vmaxps(c, v): v where either is NaN.
  __m512 v = _mm512_min_ps(c.high, _mm512_max_ps(c.low, x));
  // Only the upper clamp on n can bind (xla_exp_avx2.cc).
  __m512 k = _mm512_roundscale_ps(_mm512_fmadd_ps(v, c.log2e, c.half),
                                  _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
  k = _mm512_min_ps(c.n_high, k);
  __m512 r = _mm512_fmadd_ps(c.ln2_hi, k, v);
  r = _mm512_fmadd_ps(c.ln2_lo, k, r);
  __m512 z = _mm512_fmadd_ps(r, c.p0, c.p1);
  z = _mm512_fmadd_ps(z, r, c.p2);
  z = _mm512_fmadd_ps(z, r, c.p3);
  z = _mm512_fmadd_ps(z, r, c.p4);
  z = _mm512_fmadd_ps(z, r, c.p5);
  z = _mm512_add_ps(c.one, _mm512_fmadd_ps(z, _mm512_mul_ps(r, r), r));
  const __m512i bits = _mm512_slli_epi32(_mm512_add_epi32(_mm512_cvttps_epi32(k), c.bias), 23);
  const __m512 result = _mm512_mul_ps(z, _mm512_castsi512_ps(bits));
  // |result| < the smallest normal, ordered (NaN stays): those lanes become +0.
  const __mmask16 tiny = _mm512_cmp_ps_mask(_mm512_abs_ps(result), c.smallest, _CMP_LT_OQ);
  return _mm512_maskz_mov_ps(static_cast<__mmask16>(~tiny), result);
}

// xla_logistic: 1 / (1 + exp(-x)), a result below the smallest normal float flushed to +0
// (ordered: NaN stays). The negation flips the sign bit, as the scalar -x does.
[[gnu::always_inline]] inline __m512 logistic16(const ExpConstants& c, __m512 x) {
  const __m512 minus = _mm512_castsi512_ps(
      _mm512_xor_si512(_mm512_castps_si512(x), _mm512_set1_epi32(static_cast<int>(0x80000000u))));
  const __m512 y = _mm512_div_ps(c.one, _mm512_add_ps(c.one, exp16(c, minus)));
  const __mmask16 tiny = _mm512_cmp_ps_mask(y, c.smallest, _CMP_LT_OQ);
  return _mm512_maskz_mov_ps(static_cast<__mmask16>(~tiny), y);
}

// y[i] = f(x[i]): thirty-two values per pass, two independent vectors; the tail in one masked
// vector, so no scalar loop and nothing read or written past n.
template <__m512 (*f)(const ExpConstants&, __m512)>
void each16(const float* x, float* y, int64_t n) {
  const ExpConstants c;
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m512 a = f(c, _mm512_loadu_ps(x + i));
    const __m512 b = f(c, _mm512_loadu_ps(x + i + 16));
    _mm512_storeu_ps(y + i, a);
    _mm512_storeu_ps(y + i + 16, b);
  }
  for (; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, f(c, _mm512_loadu_ps(x + i)));
  if (i < n) {
    const auto mask = static_cast<__mmask16>((1u << (n - i)) - 1u);
    _mm512_mask_storeu_ps(y + i, mask, f(c, _mm512_maskz_loadu_ps(mask, x + i)));
  }
}

#pragma GCC pop_options

}  // namespace

bool xla_logistic_avx512(const float* x, float* y, int64_t n) {
  static const bool supported = __builtin_cpu_supports("avx512f");
  if (!supported) return false;
  each16<logistic16>(x, y, n);
  return true;
}

bool xla_exp_avx512(const float* x, float* y, int64_t n) {
  static const bool supported = __builtin_cpu_supports("avx512f");
  if (!supported) return false;
  each16<exp16>(x, y, n);
  return true;
}

}  // namespace spmd::kernels

#else

namespace spmd::kernels {
bool xla_exp_avx512(const float*, float*, int64_t) { return false; }
bool xla_logistic_avx512(const float*, float*, int64_t) { return false; }
}  // namespace spmd::kernels

#endif
