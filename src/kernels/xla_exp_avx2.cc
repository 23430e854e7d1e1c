// xla_exp's formula in AVX2 and FMA intrinsics, step for step.
#include "kernels/xla_exp_avx2.h"

#include <algorithm>

#include "kernels/xla_math.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

namespace spmd::kernels {
namespace {

// What follows is built for AVX2 and FMA, and runs only where the CPU has them (xla_exp_avx2).
#pragma GCC push_options
#pragma GCC target("avx2,fma")

// xla_exp's constants, eight wide.
struct ExpConstants {
  ExpConstants() {}  // defined here, under the pragma: an implicit one would be built without AVX
  __m256 low = _mm256_set1_ps(-87.8f), high = _mm256_set1_ps(88.8f);
  __m256 n_high = _mm256_set1_ps(127.0f);
  __m256 log2e = _mm256_set1_ps(1.44269504088896341f), half = _mm256_set1_ps(0.5f);
  __m256 ln2_hi = _mm256_set1_ps(-0.693359375f), ln2_lo = _mm256_set1_ps(2.12194440e-4f);
  __m256 p0 = _mm256_set1_ps(1.9875691500e-4f), p1 = _mm256_set1_ps(1.3981999507e-3f);
  __m256 p2 = _mm256_set1_ps(8.3334519073e-3f), p3 = _mm256_set1_ps(4.1665795894e-2f);
  __m256 p4 = _mm256_set1_ps(1.6666665459e-1f), p5 = _mm256_set1_ps(5.0000001201e-1f);
  __m256 one = _mm256_set1_ps(1.0f);
  __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  __m256 smallest = _mm256_set1_ps(std::numeric_limits<float>::min());
  __m256i bias = _mm256_set1_epi32(127);
};

[[gnu::always_inline]] inline __m256 exp8(const ExpConstants& c, __m256 x) {
  // std::max(v, c) is (v < c) ? c : v, which is maxps(c, v): v where either is NaN.
  __m256 v = _mm256_min_ps(c.high, _mm256_max_ps(c.low, x));
  // n = floor(v log2(e) + 1/2) is at least floor(-87.8 log2(e) + 1/2) = -127 already: only the
  // upper clamp can bind.
  __m256 k = _mm256_round_ps(_mm256_fmadd_ps(v, c.log2e, c.half),
                             _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
  k = _mm256_min_ps(c.n_high, k);
  __m256 r = _mm256_fmadd_ps(c.ln2_hi, k, v);
  r = _mm256_fmadd_ps(c.ln2_lo, k, r);
  __m256 z = _mm256_fmadd_ps(r, c.p0, c.p1);
  z = _mm256_fmadd_ps(z, r, c.p2);
  z = _mm256_fmadd_ps(z, r, c.p3);
  z = _mm256_fmadd_ps(z, r, c.p4);
  z = _mm256_fmadd_ps(z, r, c.p5);
  z = _mm256_add_ps(c.one, _mm256_fmadd_ps(z, _mm256_mul_ps(r, r), r));
  const __m256i bits = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvttps_epi32(k), c.bias), 23);
  const __m256 result = _mm256_mul_ps(z, _mm256_castsi256_ps(bits));
  const __m256 tiny = _mm256_cmp_ps(_mm256_and_ps(result, c.abs_mask), c.smallest, _CMP_LT_OQ);
  return _mm256_andnot_ps(tiny, result);
}

// xla_logistic: 1 / (1 + exp(-x)), a result below the smallest normal float flushed to +0 (a
// NaN compares false and stays).
[[gnu::always_inline]] inline __m256 logistic8(const ExpConstants& c, __m256 x) {
  const __m256 minus = _mm256_xor_ps(x, _mm256_castsi256_ps(_mm256_set1_epi32(INT32_MIN)));
  const __m256 y = _mm256_div_ps(c.one, _mm256_add_ps(c.one, exp8(c, minus)));
  return _mm256_andnot_ps(_mm256_cmp_ps(y, c.smallest, _CMP_LT_OQ), y);
}

// Sixteen values per pass, two independent vectors, so that more of the formula's long chain
// of dependent multiply-adds is in flight at once; the tail through the scalar function.
template <__m256 (*F)(const ExpConstants&, __m256), float (*Scalar)(float)>
void each8(const float* x, float* y, int64_t n) {
  const ExpConstants c;
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256 a = F(c, _mm256_loadu_ps(x + i));
    const __m256 b = F(c, _mm256_loadu_ps(x + i + 8));
    _mm256_storeu_ps(y + i, a);
    _mm256_storeu_ps(y + i + 8, b);
  }
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, F(c, _mm256_loadu_ps(x + i)));
  for (; i < n; ++i) y[i] = Scalar(x[i]);
}

float scalar_exp(float v) { return xla_exp(v); }
float scalar_logistic(float v) { return xla_logistic(v); }

#pragma GCC pop_options

bool avx2_and_fma() {
  static const bool supported = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return supported;
}

}  // namespace

bool xla_exp_avx2(const float* x, float* y, int64_t n) {
  if (!avx2_and_fma()) return false;
  each8<exp8, scalar_exp>(x, y, n);
  return true;
}

bool xla_logistic_avx2(const float* x, float* y, int64_t n) {
  if (!avx2_and_fma()) return false;
  each8<logistic8, scalar_logistic>(x, y, n);
  return true;
}

}  // namespace spmd::kernels

#else

namespace spmd::kernels {
bool xla_exp_avx2(const float*, float*, int64_t) { return false; }
bool xla_logistic_avx2(const float*, float*, int64_t) { return false; }
}  // namespace spmd::kernels

#endif
