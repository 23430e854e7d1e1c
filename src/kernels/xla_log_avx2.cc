// xla_log_of's and xla_log1p_of's formulas in AVX2 and FMA intrinsics, step for step.
#include "kernels/xla_log_avx2.h"

#include "kernels/xla_math.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

namespace spmd::kernels {
namespace {

// What follows is built for AVX2 and FMA, and runs only where the CPU has them.
#pragma GCC push_options
#pragma GCC target("avx2,fma")

__m256 splat(float v) { return _mm256_set1_ps(v); }

// c ? a : b, lane by lane (c all ones or all zeros).
[[gnu::always_inline]] inline __m256 pick(__m256 c, __m256 a, __m256 b) {
  return _mm256_blendv_ps(b, a, c);
}

// xla_log on the lanes, for arguments in its domain (the others' lanes are replaced after).
[[gnu::always_inline]] inline __m256 log8(__m256 v) {
  // std::max(v, smallest) is (v < smallest) ? smallest : v, which is maxps(smallest, v).
  const __m256 m = _mm256_max_ps(splat(std::numeric_limits<float>::min()), v);
  const __m256i bits = _mm256_castps_si256(m);
  __m256 e =
      _mm256_cvtepi32_ps(_mm256_sub_epi32(_mm256_srli_epi32(bits, 23), _mm256_set1_epi32(126)));
  __m256 x = _mm256_castsi256_ps(
      _mm256_or_si256(_mm256_and_si256(bits, _mm256_set1_epi32(static_cast<int32_t>(0x807fffffu))),
                      _mm256_set1_epi32(0x3f000000)));
  const __m256 low = _mm256_cmp_ps(x, splat(0.707106781186547524f), _CMP_LT_OQ);
  e = _mm256_sub_ps(e, _mm256_and_ps(low, splat(1.0f)));
  x = _mm256_add_ps(_mm256_sub_ps(x, splat(1.0f)), _mm256_and_ps(low, x));
  const __m256 x2 = _mm256_mul_ps(x, x);
  const __m256 x3 = _mm256_mul_ps(x2, x);
  __m256 y = _mm256_fmadd_ps(x, splat(7.0376836292e-2f), splat(-1.1514610310e-1f));
  __m256 y1 = _mm256_fmadd_ps(x, splat(-1.2420140846e-1f), splat(1.4249322787e-1f));
  __m256 y2 = _mm256_fmadd_ps(x, splat(2.0000714765e-1f), splat(-2.4999993993e-1f));
  y = _mm256_fmadd_ps(y, x, splat(1.1676998740e-1f));
  y1 = _mm256_fmadd_ps(y1, x, splat(-1.6668057665e-1f));
  y2 = _mm256_fmadd_ps(y2, x, splat(3.3333331174e-1f));
  y = _mm256_fmadd_ps(y, x3, y1);
  y = _mm256_fmadd_ps(y, x3, y2);
  y = _mm256_fmadd_ps(y, x3, _mm256_mul_ps(splat(-2.12194440e-4f), e));
  x = _mm256_fmadd_ps(x2, splat(-0.5f), x);
  x = _mm256_add_ps(x, y);
  return _mm256_fmadd_ps(splat(0.693359375f), e, x);
}

// |v| < the smallest normal float (a zero or a subnormal; false for NaN).
[[gnu::always_inline]] inline __m256 tiny(__m256 v) {
  const __m256 magnitude = _mm256_and_ps(v, _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff)));
  return _mm256_cmp_ps(magnitude, splat(std::numeric_limits<float>::min()), _CMP_LT_OQ);
}

// xla_log_of: NaN below 0 and for NaN, -inf for a zero or subnormal, inf at inf.
[[gnu::always_inline]] inline __m256 log_of8(__m256 v) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  __m256 y = log8(v);
  y = pick(_mm256_cmp_ps(v, splat(kInf), _CMP_EQ_OQ), splat(kInf), y);
  y = pick(_mm256_cmp_ps(v, splat(0.0f), _CMP_GE_OQ), y,
           splat(std::numeric_limits<float>::quiet_NaN()));
  return pick(tiny(v), splat(-kInf), y);
}

// Cephes' rational form of log1p near 0 (xla_log1p's first branch).
[[gnu::always_inline]] inline __m256 log1p_near8(__m256 x) {
  __m256 n = splat(kXlaLog1pNumerator[0]);
  __m256 d = splat(kXlaLog1pDenominator[0]);
  for (int k = 1; k < 7; ++k) {
    n = _mm256_fmadd_ps(n, x, splat(kXlaLog1pNumerator[k]));
    d = _mm256_fmadd_ps(d, x, splat(kXlaLog1pDenominator[k]));
  }
  const __m256 x2 = _mm256_mul_ps(x, x);
  const __m256 r = _mm256_mul_ps(_mm256_mul_ps(x, x2), _mm256_div_ps(n, d));
  return _mm256_add_ps(x, _mm256_fmadd_ps(splat(-0.5f), x2, r));
}

// |x| < sqrt(2) - 1, where xla_log1p takes its rational form (false for NaN).
[[gnu::always_inline]] inline __m256 log1p_near(__m256 x) {
  const __m256 magnitude = _mm256_and_ps(x, _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff)));
  return _mm256_cmp_ps(magnitude, splat(0.41421356237309504880f), _CMP_LT_OQ);
}

// xla_log1p_of from one or both forms (the rational one near 0, log_of(1 + x) elsewhere), a
// zero or subnormal x as a zero of its sign.
enum class Log1pForms { kNear, kFar, kBoth };

template <Log1pForms kForms>
[[gnu::always_inline]] inline __m256 log1p_of8(__m256 x) {
  __m256 y;
  if constexpr (kForms == Log1pForms::kNear) {
    y = log1p_near8(x);
  } else if constexpr (kForms == Log1pForms::kFar) {
    y = log_of8(_mm256_add_ps(splat(1.0f), x));
  } else {
    // Both forms, then the mask: with the mask first the loop ran 5-10% slower (GCC 12
    // scheduled the two long chains apart).
    const __m256 near = log1p_near8(x);
    const __m256 far = log_of8(_mm256_add_ps(splat(1.0f), x));
    y = pick(log1p_near(x), near, far);
  }
  return pick(tiny(x), _mm256_mul_ps(x, splat(0.0f)), y);
}

// The forms n values need: kNear where every one is near 0 (|x| < sqrt(2) - 1), kFar where none
// is (NaN counts as far, as in xla_log1p), else kBoth, found at the first pair that differs.
Log1pForms log1p_forms(const float* x, int64_t n) {
  bool any_near = false;
  bool any_far = false;
  int64_t i = 0;
  for (; i + 8 <= n && !(any_near && any_far); i += 8) {
    const int lanes = _mm256_movemask_ps(log1p_near(_mm256_loadu_ps(x + i)));
    any_near = any_near || lanes != 0;
    any_far = any_far || lanes != 0xff;
  }
  for (; i < n && !(any_near && any_far); ++i) {
    const bool near = std::fabs(x[i]) < 0.41421356237309504880f;
    any_near = any_near || near;
    any_far = any_far || !near;
  }
  if (any_near && any_far) return Log1pForms::kBoth;
  return any_near ? Log1pForms::kNear : Log1pForms::kFar;
}

// Sixteen values per pass, two independent vectors; the tail through the scalar function.
template <__m256 (*F)(__m256), float (*Scalar)(float)>
void each8(const float* x, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256 a = F(_mm256_loadu_ps(x + i));
    const __m256 b = F(_mm256_loadu_ps(x + i + 8));
    _mm256_storeu_ps(y + i, a);
    _mm256_storeu_ps(y + i + 8, b);
  }
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, F(_mm256_loadu_ps(x + i)));
  for (; i < n; ++i) y[i] = Scalar(x[i]);
}

#pragma GCC pop_options

float scalar_log(float v) { return xla_log_of(v); }
float scalar_log1p(float v) { return xla_log1p_of(v); }

bool avx2_and_fma() {
  static const bool supported = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return supported;
}

}  // namespace

bool xla_log_avx2(const float* x, float* y, int64_t n) {
  if (!avx2_and_fma()) return false;
  each8<log_of8, scalar_log>(x, y, n);
  return true;
}

bool xla_log1p_avx2(const float* x, float* y, int64_t n) {
  if (!avx2_and_fma()) return false;
  // Each form is computed only where some value takes it: values of one side (a log1p of
  // small probabilities, of a loss near 0) cost one form, not two. Decided once per call, by a
  // scan that stops at the first pair of values on different sides: decided per vector, the
  // branch mispredicted often enough on mixed values (|N(0, 1)|: a third near 0) to cost 30%.
  switch (log1p_forms(x, n)) {
    case Log1pForms::kNear:
      each8<log1p_of8<Log1pForms::kNear>, scalar_log1p>(x, y, n);
      break;
    case Log1pForms::kFar:
      each8<log1p_of8<Log1pForms::kFar>, scalar_log1p>(x, y, n);
      break;
    case Log1pForms::kBoth:
      each8<log1p_of8<Log1pForms::kBoth>, scalar_log1p>(x, y, n);
      break;
  }
  return true;
}

}  // namespace spmd::kernels

#else

namespace spmd::kernels {
bool xla_log_avx2(const float*, float*, int64_t) { return false; }
bool xla_log1p_avx2(const float*, float*, int64_t) { return false; }
}  // namespace spmd::kernels

#endif
