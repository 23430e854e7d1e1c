// XLA's CPU float32 approximations of log, log1p, exp, tanh, logistic, erf, erfc and rsqrt,
// operation for operation as XLA's code generator writes them and LLVM compiles them for an x86-64
// CPU (multiply-adds fused where LLVM contracts them), so that spmd's element-wise kernels and
// samplers give JAX's values bit for bit. Each was checked against jax.jit of the jnp function
// (JAX 0.10.2) over 500,017 float32 inputs (300,000 of random bits: every exponent, both signs,
// NaNs; the rest spanning the usual domain and the special values), run with subnormals flushed
// as spmd's kernels run (float_environment.h): no value differs.
// - xla_log, xla_log1p: Cephes' logf and log1pf (Eigen's plog and plog1p), for arguments in
//   their domain; xla_log_of and xla_log1p_of take any float (NaN below the domain, -inf at
//   its edge, a subnormal read as zero, inf at inf).
// - xla_exp: Cephes' expf as XLA's own vector code writes it: the argument clamped to
//   [-87.8, 88.8], n = floor(x log2(e) + 1/2) held to [-127, 127], a degree-5 polynomial, and a
//   result below the smallest normal float flushed to 0, as XLA's CPU code runs.
// - xla_tanh: Eigen's rational interpolant (degree 13 over 6) on the argument clamped to
//   ±7.99881172 (its value there is exactly ±1), x itself below 0.0004 in magnitude.
// - xla_logistic: 1 / (1 + exp(-x)), as XLA expands it.
// - xla_rsqrt: the CPU's approximate reciprocal square root refined by Newton-Raphson steps
//   (one on AMD CPUs, two elsewhere), as XLA does where the CPU has AVX; 1 / sqrt(x) where it
//   does not. Its values therefore depend on the CPU, as JAX's do: they equal JAX's on the same
//   machine.
// Inline (and always inlined) so that the loops calling them, built for two instruction sets
// (random_samplers.cc, elementwise.cc), vectorise around them. Internal to kernels/.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#define XLA_MATH_INLINE [[gnu::always_inline]] inline

namespace spmd::kernels {

// XLA's CPU logarithm of a float32 (Cephes' logf, as Eigen's plog and XLA's code generator
// write it, multiply-adds fused): the mantissa's polynomial plus the exponent times ln 2 in two
// parts. Values at most 0 or not finite are not handled: the callers' never are.
XLA_MATH_INLINE float xla_log(float v) {
  constexpr float kP[] = {7.0376836292e-2f,  -1.1514610310e-1f, 1.1676998740e-1f,
                          -1.2420140846e-1f, 1.4249322787e-1f,  -1.6668057665e-1f,
                          2.0000714765e-1f,  -2.4999993993e-1f, 3.3333331174e-1f};
  // v = x 2^e with x in [0.5, 1), from the bits (v is normal after the max, as Eigen's pfrexp).
  const uint32_t bits = std::bit_cast<uint32_t>(std::max(v, std::numeric_limits<float>::min()));
  auto e = static_cast<float>(static_cast<int>(bits >> 23) - 126);
  float x = std::bit_cast<float>((bits & 0x807fffffu) | 0x3f000000u);
  // To [sqrt(1/2), sqrt(2)), less 1.
  const bool low = x < 0.707106781186547524f;
  e -= low ? 1.0f : 0.0f;
  x = x - 1.0f + (low ? x : 0.0f);
  const float x2 = x * x;
  const float x3 = x2 * x;
  float y = std::fma(x, kP[0], kP[1]);
  float y1 = std::fma(x, kP[3], kP[4]);
  float y2 = std::fma(x, kP[6], kP[7]);
  y = std::fma(y, x, kP[2]);
  y1 = std::fma(y1, x, kP[5]);
  y2 = std::fma(y2, x, kP[8]);
  y = std::fma(y, x3, y1);
  y = std::fma(y, x3, y2);
  // LLVM contracts (y·x³) + (e·c) into one fused multiply-add around the product y·x³.
  y = std::fma(y, x3, -2.12194440e-4f * e);
  x = std::fma(x2, -0.5f, x);
  x += y;
  return std::fma(0.693359375f, e, x);
}

// Cephes' log1pf's rational approximation, numerator and denominator from the highest power
// (xla_log1p; xla_log_avx2.cc computes the same).
inline constexpr float kXlaLog1pNumerator[] = {
    4.5270000862445199635215e-5f, 4.9854102823193375972212e-1f, 6.5787325942061044846969e0f,
    2.9911919328553073277375e1f,  6.0949667980987787057556e1f,  5.7112963590585538103336e1f,
    2.0039553499201281259648e1f};
inline constexpr float kXlaLog1pDenominator[] = {1.0f,
                                                 1.5062909083469192043167e1f,
                                                 8.3047565967967209469434e1f,
                                                 2.2176239823732856465394e2f,
                                                 3.0909872225312059774938e2f,
                                                 2.1642788614495947685003e2f,
                                                 6.0118660497603843919306e1f};

// XLA's log1p of a float32: Cephes' rational approximation below sqrt(2) - 1 in magnitude,
// log(1 + x) above.
XLA_MATH_INLINE float xla_log1p(float x) {
  if (!(std::fabs(x) < 0.41421356237309504880f)) return xla_log(1.0f + x);
  float n = kXlaLog1pNumerator[0];
  float d = kXlaLog1pDenominator[0];
#pragma GCC unroll 6
  for (int k = 1; k < 7; ++k) {
    n = std::fma(n, x, kXlaLog1pNumerator[k]);
    d = std::fma(d, x, kXlaLog1pDenominator[k]);
  }
  const float x2 = x * x;
  return x + std::fma(-0.5f, x2, x * x2 * (n / d));
}

// XLA's exp of a float32 (see above).
XLA_MATH_INLINE float xla_exp(float input) {
  input = std::min(std::max(input, -87.8f), 88.8f);  // NaN passes through both
  float n = std::floor(std::fma(input, 1.44269504088896341f, 0.5f));
  n = std::min(std::max(n, -127.0f), 127.0f);
  // x - n ln 2, ln 2 in two parts.
  float x = std::fma(-0.693359375f, n, input);
  x = std::fma(2.12194440e-4f, n, x);
  float z = std::fma(x, 1.9875691500e-4f, 1.3981999507e-3f);
  z = std::fma(z, x, 8.3334519073e-3f);
  z = std::fma(z, x, 4.1665795894e-2f);
  z = std::fma(z, x, 1.6666665459e-1f);
  z = std::fma(z, x, 5.0000001201e-1f);
  z = 1.0f + std::fma(z, x * x, x);
  // 2^n from its bits; n = -127 gives 0.
  const auto n_int = static_cast<int32_t>(n);
  const float result = z * std::bit_cast<float>(static_cast<uint32_t>(n_int + 127) << 23);
  return std::fabs(result) < std::numeric_limits<float>::min() ? 0.0f : result;
}

// xla_log over every float: NaN below 0 (and for NaN), -inf at 0 and for a subnormal (read as
// zero, as XLA reads it), inf at inf. Selects rather than branches, so that loops vectorise.
XLA_MATH_INLINE float xla_log_of(float v) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  float y = xla_log(v);
  y = v == kInf ? kInf : y;
  y = v >= 0.0f ? y : std::numeric_limits<float>::quiet_NaN();
  return std::fabs(v) < std::numeric_limits<float>::min() ? -kInf : y;  // whatever the mode
}

// xla_log1p over every float: NaN below -1, -inf at -1, log(1 + x) far from 0, a subnormal
// read as a zero of its sign.
XLA_MATH_INLINE float xla_log1p_of(float x) {
  const float near = xla_log1p(x);
  const float far = xla_log_of(1.0f + x);
  const float y = std::fabs(x) < 0.41421356237309504880f ? near : far;
  return std::fabs(x) < std::numeric_limits<float>::min() ? x * 0.0f : y;
}

// XLA's tanh of a float32 (see above).
XLA_MATH_INLINE float xla_tanh(float x) {
  constexpr float kClamp = 7.99881172180175781f;
  constexpr float kNumerator[] = {
      -2.76076847742355e-16f, 2.00018790482477e-13f, -8.60467152213735e-11f, 5.12229709037114e-08f,
      1.48572235717979e-05f,  6.37261928875436e-04f, 4.89352455891786e-03f};
  constexpr float kDenominator[] = {1.19825839466702e-06f, 1.18534705686654e-04f,
                                    2.26843463243900e-03f, 4.89352518554385e-03f};
  const float c = std::min(std::max(x, -kClamp), kClamp);
  const float c2 = c * c;
  float n = kNumerator[0];
#pragma GCC unroll 6
  for (int k = 1; k < 7; ++k) n = std::fma(c2, n, kNumerator[k]);
  float d = kDenominator[0];
#pragma GCC unroll 3
  for (int k = 1; k < 4; ++k) d = std::fma(c2, d, kDenominator[k]);
  return std::fabs(x) < 0.0004f ? x : (c * n) / d;
}

// XLA's expm1 of a float32 (its elemental emitter's EmitExpm1): exp(x) - 1 where |x| > 0.5,
// else tanh(x / 2) (exp(x) + 1), which keeps small results' precision; x itself where x / 2 is
// zero. Over 300,000 float32s (normals, small ones, ±0, subnormals, ±inf, NaN, overflow) it
// matched jax.jit(jnp.expm1) in every value; the C library's expm1 differed in 19% of them.
XLA_MATH_INLINE float xla_expm1(float x) {
  const float half = x * 0.5f;
  const float e = xla_exp(x);
  const float y = std::fabs(x) > 0.5f ? e - 1.0f : xla_tanh(half) * (e + 1.0f);
  return half == 0.0f ? x : y;
}

// XLA's logistic of a float32, 1 / (1 + exp(-x)), a subnormal result flushed to 0 whatever the
// mode.
XLA_MATH_INLINE float xla_logistic(float x) {
  const float y = 1.0f / (1.0f + xla_exp(-x));
  return y < std::numeric_limits<float>::min() ? 0.0f : y;
}

// Whether XLA refines the CPU's rsqrt (AVX present), and with how many Newton-Raphson steps.
inline int xla_rsqrt_steps() {
#if defined(__x86_64__) && defined(__GNUC__)
  static const int steps = __builtin_cpu_supports("avx") == 0 ? 0
                           : __builtin_cpu_is("amd") != 0     ? 1
                                                              : 2;
  return steps;
#else
  return 0;
#endif
}

// XLA's CPU erf of a float32 (its erf intrinsic: Eigen's rational interpolant, degree 9 over
// 12, with explicit fused multiply-adds), ±1 from |x| >= 3.8325068 (the last float below 1
// rounds up there).
XLA_MATH_INLINE float xla_erf(float x) {
  const bool clamp = 3.832506856900711f <= std::fabs(x);
  const float x2 = x * x;
  float p = std::fma(x2, 0.00022905065861350646f, 0.0034082910107109506f);
  p = std::fma(x2, p, 0.050955695062380861f);
  p = std::fma(x2, p, 0.18520832239976145f);
  p = std::fma(x2, p, 1.128379143519084f);
  p = x * p;
  float q = std::fma(x2, -1.1791602954361697e-7f, 0.000023547966471313185f);
  q = std::fma(x2, q, 0.0010179625278914885f);
  q = std::fma(x2, q, 0.014070470171167667f);
  q = std::fma(x2, q, 0.11098505178285362f);
  q = std::fma(x2, q, 0.49746925110067538f);
  q = std::fma(x2, q, 1.0f);
  return clamp ? std::copysign(1.0f, x) : p / q;
}

// XLA's float32 erfc as JAX compiles it (the CHLO decomposition, Cephes' erfcf, with the
// multiply-adds LLVM fuses): 1 - x P(x^2) for |x| < 1; beyond, exp(-x^2) / |x| times a
// polynomial in 1/x^2 (one below |x| = 2, another above), 0 where -x^2 < -88.72, and 2 minus
// that for negative x.
XLA_MATH_INLINE float xla_erfc(float x) {
  const float ax = std::fabs(x);
  const float x2 = x * x;
  constexpr float kNear[] = {7.85386146e-05f, -0.000801019371f, 0.00518832775f, -0.0268538129f,
                             0.112835854f,    -0.37612626f,     1.12837911f};
  float p = kNear[0];
#pragma GCC unroll 6
  for (int k = 1; k < 7; ++k) p = std::fma(p, x2, kNear[k]);
  const float near = std::fma(-x, p, 1.0f);
  const float z = 1.0f / x2;
  constexpr float kMiddle[] = {0.0232682f,    -0.138703942f, 0.368742466f,
                               -0.582473278f, 0.621000469f,  -0.494451523f,
                               0.340488f,     -0.274112701f, 0.563825965f};
  constexpr float kFar[] = {-10.477664f,  12.9772f,    -7.49551868f,  2.92101908f,
                            -1.01526523f, 0.42184633f, -0.282076746f, 0.564189494f};
  float middle = kMiddle[0];
#pragma GCC unroll 8
  for (int k = 1; k < 9; ++k) middle = std::fma(middle, z, kMiddle[k]);
  float far = kFar[0];
#pragma GCC unroll 7
  for (int k = 1; k < 8; ++k) far = std::fma(far, z, kFar[k]);
  const float scaled = xla_exp(-x2) * (1.0f / ax);
  float tail = scaled * (ax < 2.0f ? middle : far);
  tail = -x2 < -88.7228394f ? 0.0f : tail;
  tail = x < 0.0f ? 2.0f - tail : tail;
  return ax < 1.0f ? near : tail;
}

// XLA's rsqrt of a float32 (see above).
XLA_MATH_INLINE float xla_rsqrt(float x) {
  const int steps = xla_rsqrt_steps();
#if defined(__x86_64__)
  if (steps > 0) {
    const float guess = _mm_cvtss_f32(_mm_rsqrt_ss(_mm_set_ss(x)));
    if (x < 0.0f) return std::numeric_limits<float>::quiet_NaN();
    if (x < std::numeric_limits<float>::min() || x == std::numeric_limits<float>::infinity()) {
      return guess;
    }
    float y = guess;
    for (int step = 0; step < steps; ++step) {
      const float h = std::fma(x * y, y, -1.0f);
      y = std::fma(y * -0.5f, h, y);
    }
    return y;
  }
#endif
  return 1.0f / std::sqrt(x);
}

}  // namespace spmd::kernels
