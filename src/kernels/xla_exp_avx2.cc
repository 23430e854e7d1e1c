// xla_exp's formula in AVX2 and FMA intrinsics, step for step.
#include "kernels/xla_exp_avx2.h"

#include "kernels/xla_math.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

namespace spmd::kernels {
namespace {

__attribute__((target("avx2,fma"))) void exp_loop(const float* x, float* y, int64_t n) {
  const __m256 low = _mm256_set1_ps(-87.8f), high = _mm256_set1_ps(88.8f);
  const __m256 n_low = _mm256_set1_ps(-127.0f), n_high = _mm256_set1_ps(127.0f);
  const __m256 log2e = _mm256_set1_ps(1.44269504088896341f), half = _mm256_set1_ps(0.5f);
  const __m256 ln2_hi = _mm256_set1_ps(-0.693359375f), ln2_lo = _mm256_set1_ps(2.12194440e-4f);
  const __m256 p0 = _mm256_set1_ps(1.9875691500e-4f), p1 = _mm256_set1_ps(1.3981999507e-3f);
  const __m256 p2 = _mm256_set1_ps(8.3334519073e-3f), p3 = _mm256_set1_ps(4.1665795894e-2f);
  const __m256 p4 = _mm256_set1_ps(1.6666665459e-1f), p5 = _mm256_set1_ps(5.0000001201e-1f);
  const __m256 one = _mm256_set1_ps(1.0f);
  const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  const __m256 smallest = _mm256_set1_ps(std::numeric_limits<float>::min());
  const __m256i bias = _mm256_set1_epi32(127);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    // std::max(v, c) is (v < c) ? c : v, which is maxps(c, v): v where either is NaN.
    __m256 v = _mm256_max_ps(low, _mm256_loadu_ps(x + i));
    v = _mm256_min_ps(high, v);
    __m256 k =
        _mm256_round_ps(_mm256_fmadd_ps(v, log2e, half), _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
    k = _mm256_min_ps(n_high, _mm256_max_ps(n_low, k));
    __m256 r = _mm256_fmadd_ps(ln2_hi, k, v);
    r = _mm256_fmadd_ps(ln2_lo, k, r);
    __m256 z = _mm256_fmadd_ps(r, p0, p1);
    z = _mm256_fmadd_ps(z, r, p2);
    z = _mm256_fmadd_ps(z, r, p3);
    z = _mm256_fmadd_ps(z, r, p4);
    z = _mm256_fmadd_ps(z, r, p5);
    z = _mm256_add_ps(one, _mm256_fmadd_ps(z, _mm256_mul_ps(r, r), r));
    const __m256i bits = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvttps_epi32(k), bias), 23);
    const __m256 result = _mm256_mul_ps(z, _mm256_castsi256_ps(bits));
    const __m256 tiny = _mm256_cmp_ps(_mm256_and_ps(result, abs_mask), smallest, _CMP_LT_OQ);
    _mm256_storeu_ps(y + i, _mm256_andnot_ps(tiny, result));
  }
  for (; i < n; ++i) y[i] = xla_exp(x[i]);
}

}  // namespace

bool xla_exp_avx2(const float* x, float* y, int64_t n) {
  static const bool supported = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  if (!supported) return false;
  exp_loop(x, y, n);
  return true;
}

}  // namespace spmd::kernels

#else

namespace spmd::kernels {
bool xla_exp_avx2(const float*, float*, int64_t) { return false; }
}  // namespace spmd::kernels

#endif
