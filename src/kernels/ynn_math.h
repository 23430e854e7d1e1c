// YNNPACK's float32 exp, log and their kin, operation for operation as JAX 0.10.2's jaxlib runs
// them: XLA's CPU backend hands YNNPACK every reduction (and the element-wise work fused around it)
// whose input or output holds 4,096 elements or more (ynn_support.cc: IsInstructionPreferredByYnn),
// and YNNPACK computes exp and log there with its own polynomials, not XLA's (xla_math.h). So
// jax.random.dirichlet of 4,096 values or more takes its logarithms and exponentials from here.
// Checked against jax.jit programs whose optimised HLO is a "__ynn_fusion" with the function at
// its root (XLA_FLAGS=--xla_dump_to): 32,768 exps and 32,768 logs, no value differs.
// - ynn_exp: x clamped to [-88.0297, 88.7228], b = round(x log2(e)) by the 1.5·2^23 trick,
//   r = x - b ln 2 in two fused steps, 2^b from the bits, expm1(r) = r + r²·P(r) (P of degree 6,
//   evaluated in even and odd halves over r²), and 2^b·expm1(r) + 2^b in one fused multiply-add.
// - ynn_log: x = 2^e·m with m in [sqrt(1/2), sqrt(2)), log(m) = r + r²·P(r)/Q(r) (degrees 2
//   over 2, the same halves) for r = m - 1, plus e ln 2 fused.
// - ynn_expm1: exp's reduction, then 2^b·expm1(r) + (2^b - 1) in one fused multiply-add.
// - ynn_log1p: log's formula for y = 1 + x, but r = x itself where y's exponent is 0 (y in
//   [sqrt(1/2), sqrt(2))), so that small x keep their low bits.
// - ynn_tanh: e / (e + 2) for e = ynn_expm1(2x), 2x clamped at 40 (any clamp from 9 to 88 gives
//   the same bits: e / (e + 2) is 1 there), so a large x gives 1, not inf / inf.
// - ynn_logistic: 1 / (ynn_exp(-x) + 1), lax.logistic as XLA expands it, with YNNPACK's exp.
// Found by values, not read from YNNPACK's source: jaxlib 0.10.2's build differs from the
// kernels in YNNPACK's repository today (a rational tanh, other polynomials). Each was checked on
// 786,460 float32s (2^18 of random bits, ±10, ±1, ±0.001, ±100 and the special values) against
// jax.jit(lambda b, m: jnp.sum(f(b) * m, 1)) for b = [x, 1] and m = [1, 0], a "__ynn_fusion"
// whose sums are f(x) exactly: no value differs. YNNPACK's erf is not yet among them (its
// values match no formula tried: erf of a large x is 1 - 2^-24 there, not 1).
// A subnormal argument is read as zero where the thread's arithmetic reads it so (the exponent
// comes from a comparison, as AVX-512's getexp under DAZ), and a result below the smallest normal
// flushes to zero where the thread flushes: the same bits as YNNPACK's under the same mode
// (float_environment.h). Inline, so the samplers' two builds (random_samplers.cc) carry them.
// Internal to kernels/.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#define YNN_MATH_INLINE [[gnu::always_inline]] inline

namespace spmd::kernels {
namespace ynn_detail {

// p[0] x^(n-1) + ... + p[n-1], YNNPACK's way: two Horner chains over x², even and odd powers,
// joined by one more multiply-add (eval_polynomial with x and x²).
template <int N>
YNN_MATH_INLINE float polynomial(const float (&p)[N], float x, float x2) {
  float even = p[0], odd = p[1];
  for (int i = 2; i < N; i += 2) {
    even = std::fma(x2, even, p[i]);
    if (i + 1 < N) odd = std::fma(x2, odd, p[i + 1]);
  }
  return N % 2 == 1 ? std::fma(x, odd, even) : std::fma(x, even, odd);
}

// x rounded to an integer by adding and taking away 1.5·2^23 (|x| < 2^22).
YNN_MATH_INLINE float round_small(float x) {
  constexpr float kMagic = 12582912.0f;
  return (kMagic + x) - kMagic;
}

// 2^b for an integer-valued b in [-127, 128]: b + 127 placed in the exponent field (0 at -127,
// inf at 128).
YNN_MATH_INLINE float exp2_round(float b) {
  constexpr float kMagic = 127.0f + 8388608.0f;
  return std::bit_cast<float>(std::bit_cast<uint32_t>(b + kMagic) << 23);
}

// floor(log2 |x|) as AVX-512's getexp gives it for x >= 0: -inf at zero (a subnormal read as
// zero by the comparison where the thread reads it so), inf at inf, NaN for NaN and below zero.
YNN_MATH_INLINE float floor_log2(float x) {
  if (std::isnan(x) || x < 0.0f) return std::numeric_limits<float>::quiet_NaN();
  if (x == 0.0f) return -std::numeric_limits<float>::infinity();
  if (std::isinf(x)) return x;
  // A normal x's exponent field, unbiased, without the C library's call (a sum of logs took
  // ten times JAX's time through ilogbf); a subnormal's from ilogb.
  const uint32_t field = std::bit_cast<uint32_t>(x) >> 23;
  return field != 0 ? static_cast<float>(static_cast<int>(field) - 127)
                    : static_cast<float>(std::ilogb(x));
}

// exp's reduction: x = b ln 2 + r, giving 2^b (x itself where x is NaN) and expm1(r).
struct ExpParts {
  float two_b;
  float expm1_r;
};
YNN_MATH_INLINE ExpParts exp_parts(float x) {
  constexpr float kP[] = {-4.9866619520e-05f, 2.2773783712e-04f, 1.4132461511e-03f,
                          8.3242934197e-03f,  4.1665628552e-02f, 1.6666725278e-01f,
                          4.9999994040e-01f};
  // A NaN x gives NaN whatever the clamp makes of it: 2^b is replaced by x below.
  const float clamped = std::min(std::max(x, -88.02969360351562f), 88.72283935546875f);
  const float b = round_small(clamped * 1.4426950408889634f);
  float r = std::fma(b, -6.9314575195e-01f, clamped);
  r = std::fma(b, -1.4286067653e-06f, r);
  float two_b = exp2_round(b);
  if (std::isnan(x)) two_b = x;
  const float r2 = r * r;
  return {two_b, std::fma(r2, polynomial(kP, r, r2), r)};
}

// log's formula for y, r replaced by `small` where y's exponent is 0 (log1p: x itself).
YNN_MATH_INLINE float log_of(float y, float small, bool plus_one) {
  constexpr float kP[] = {-5.2293352783e-03f, -3.3127889037e-01f, -4.9999964237e-01f};
  constexpr float kQ[] = {3.9658042789e-01f, 1.3292170763e+00f, 1.0f};
  float e = floor_log2(y);
  // The mantissa under 1.0's exponent, from the bits.
  float m = std::bit_cast<float>((std::bit_cast<uint32_t>(y) & 0x007fffffu) | 0x3f800000u);
  if (m > 1.41421356237309504880f) {
    e = e + 1.0f;
    m = m * 0.5f;
  }
  const float r = plus_one && e == 0.0f ? small : m - 1.0f;
  const float r2 = r * r;
  const float log_m = std::fma(r2, polynomial(kP, r, r2) / polynomial(kQ, r, r2), r);
  return std::fma(e, 6.93147180559945309e-01f, log_m);
}

}  // namespace ynn_detail

// YNNPACK's exp of a float32 (above).
YNN_MATH_INLINE float ynn_exp(float x) {
  const auto [two_b, expm1_r] = ynn_detail::exp_parts(x);
  return std::isinf(two_b) ? two_b : std::fma(two_b, expm1_r, two_b);
}

// YNNPACK's expm1 of a float32 (above): -1 below about -88, inf above about 88.7.
YNN_MATH_INLINE float ynn_expm1(float x) {
  const auto [two_b, expm1_r] = ynn_detail::exp_parts(x);
  return std::isinf(two_b) ? two_b : std::fma(two_b, expm1_r, two_b - 1.0f);
}

// YNNPACK's tanh of a float32 (above).
YNN_MATH_INLINE float ynn_tanh(float x) {
  const float e = ynn_expm1(std::min(2.0f * x, 40.0f));  // NaN stays NaN: std::min keeps it
  return e / (e + 2.0f);
}

// lax.logistic of a float32 inside YNNPACK's fusion (above).
YNN_MATH_INLINE float ynn_logistic(float x) { return 1.0f / (ynn_exp(-x) + 1.0f); }

// YNNPACK's log of a float32 (above).
YNN_MATH_INLINE float ynn_log(float x) { return ynn_detail::log_of(x, 0.0f, false); }

// YNNPACK's log1p of a float32 (above).
YNN_MATH_INLINE float ynn_log1p(float x) { return ynn_detail::log_of(x + 1.0f, x, true); }

}  // namespace spmd::kernels
