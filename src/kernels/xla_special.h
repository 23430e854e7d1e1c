// jax.lax's lgamma, digamma and erf_inv one element at a time, each the program XLA compiles for
// it (JAX 0.10.2's CHLO decompositions after XLA's simplifier), operation for operation:
// - lgamma and digamma: Lanczos' approximation with g = 7 and nine coefficients, Euler's
//   reflection below 1/2; log(t) as log1p(z / 7.5) + log(7.5), a division by the constant 7.5
//   made a product by its reciprocal as XLA's simplifier makes it, and lgamma's one
//   multiply-add that LLVM contracts fused.
// - erf_inv: Giles' polynomials in w = -log1p(-x²) (two pieces for float32, three for float64),
//   Horner's steps fused multiply-adds as LLVM contracts them.
// The half types are computed in float32 and rounded once, as XLA upcasts them.
//
// Each function takes the logarithms, sine and cosine from a policy `M` (static log, log1p, sin
// and cos of F): the CPU backend's float32 kernels pass XLA's own log and log1p (xla_math.h),
// which makes them JAX's values bit for bit; float64 and the GPU pass the platform library's
// (StdMath). Written once for the host and the GPU (`__host__ __device__` under nvcc): the CUDA
// chain kernel (scalar_ops.h) runs the same source. Pure functions; thread-safe. Internal to
// kernels/.
#pragma once

#include <cmath>
#include <limits>

#if !defined(SPMD_HOST_DEVICE)
#if defined(__CUDACC__)
#define SPMD_HOST_DEVICE __host__ __device__
#else
#define SPMD_HOST_DEVICE
#endif
#endif

// Always inlined, so that the CPU kernels' loops, built for several instruction sets
// (elementwise.cc), compile each function for theirs: fused multiply-adds as instructions, the
// loops vectorised around them.
#if defined(__CUDACC__)
#define SPMD_SPECIAL_INLINE __forceinline__
#else
#define SPMD_SPECIAL_INLINE [[gnu::always_inline]] inline
#endif

// Fixed-count loops unrolled, so that the loops calling these functions vectorise around them.
#if defined(__CUDA_ARCH__)
#define SPMD_SPECIAL_UNROLL _Pragma("unroll")
#elif defined(__GNUC__) && !defined(__clang__)
#define SPMD_SPECIAL_UNROLL _Pragma("GCC unroll 32")
#else
#define SPMD_SPECIAL_UNROLL
#endif

namespace spmd::kernels::special {

// The platform library's functions: glibc on the host, libdevice on the GPU.
struct StdMath {
  template <class F>
  SPMD_HOST_DEVICE SPMD_SPECIAL_INLINE static F log(F x) {
    return std::log(x);
  }
  template <class F>
  SPMD_HOST_DEVICE SPMD_SPECIAL_INLINE static F log1p(F x) {
    return std::log1p(x);
  }
  template <class F>
  SPMD_HOST_DEVICE SPMD_SPECIAL_INLINE static F sin(F x) {
    return std::sin(x);
  }
  template <class F>
  SPMD_HOST_DEVICE SPMD_SPECIAL_INLINE static F cos(F x) {
    return std::cos(x);
  }
};

// Lanczos' g and the constant and eight coefficients of his sum (XLA's kLanczosCoefficients).
constexpr double kLanczosG = 7.0;
constexpr double kLanczosBase = 0.99999999999980993227684700473478;
// c_k, k = 0 … 7. (Arrays live in each function, which device code can read; nvcc refuses a
// namespace-scope array there.)
SPMD_HOST_DEVICE SPMD_SPECIAL_INLINE double lanczos_coefficient(int k) {
  constexpr double c[8] = {676.520368121885098567009190444019, -1259.13921672240287047156078755283,
                           771.3234287776530788486528258894,   -176.61502916214059906584551354,
                           12.507343278686904814458936853,     -0.13857109526572011689554707,
                           9.984369578019570859563e-6,         1.50563273514931155834e-7};
  return c[k];
}
constexpr double kPi = 3.141592653589793;
constexpr double kLogPi = 1.1447298858494002;
constexpr double kHalfLogTwoPi = 0.9189385332046727;  // (log 2 + log π) / 2
constexpr double kLogLanczosT = 2.0149030205422647;   // log(g + 1/2)
constexpr double kInverseLanczosT = 0.13333333333333333;

// The terms both functions start from: z (x - 1, or -x where reflected), t = z + g + 1/2 and
// log(t).
template <class F>
struct LanczosTerms {
  bool reflect;
  F z, t, log_t;
};

template <class F, class M>
SPMD_HOST_DEVICE SPMD_SPECIAL_INLINE LanczosTerms<F> lanczos_terms(F x) {
  const bool reflect = x < F(0.5);
  const F z = reflect ? -x : x + F(-1);
  const F t = z + F(kLanczosG + 0.5);
  const F log_t = M::log1p(z * F(kInverseLanczosT)) + F(kLogLanczosT);
  return {reflect, z, t, log_t};
}

// a(z), Lanczos' sum, in XLA's order: c1 / (z + 1) + base first, then each c_k / (z + k).
template <class F>
SPMD_HOST_DEVICE SPMD_SPECIAL_INLINE F lanczos_sum(F z) {
  F a = F(lanczos_coefficient(0)) / (z + F(1)) + F(kLanczosBase);
  SPMD_SPECIAL_UNROLL
  for (int k = 1; k < 8; ++k) a = a + F(lanczos_coefficient(k)) / (z + F(k + 1));
  return a;
}

// Each function in three parts, so that a CPU loop over many values computes the first and last
// vectorised and calls the library's sine and cosine only for the reflected values between:
// - *_unreflected: the formula for x ≥ 1/2 (and NaN) at the Lanczos terms, which below 1/2 are
//   those of 1 - x;
// - *_angle: the argument of the reflection's sine (and digamma's cosine);
// - *_from: the value from those, the sine and the cosine (read only where x < 1/2).

template <class F, class M>
SPMD_HOST_DEVICE SPMD_SPECIAL_INLINE F lgamma_unreflected(const LanczosTerms<F>& l) {
  const F r = std::fma((l.z + F(0.5)) - l.t / l.log_t, l.log_t, F(kHalfLogTwoPi));
  return r + M::log(lanczos_sum(l.z));
}

// π times the distance from |x| to the nearest integer.
template <class F>
SPMD_HOST_DEVICE SPMD_SPECIAL_INLINE F lgamma_angle(F x) {
  const F ax = std::fabs(x);
  F frac = ax - std::floor(ax);
  frac = F(0.5) < frac ? F(1) - frac : frac;
  return frac * F(kPi);
}

template <class F, class M>
SPMD_HOST_DEVICE SPMD_SPECIAL_INLINE F lgamma_from(F x, F unreflected, F sine) {
  const F denom = M::log(sine);
  const F reflected = std::isfinite(denom) ? (F(kLogPi) - denom) - unreflected : -denom;
  const F out = x < F(0.5) ? reflected : unreflected;
  return std::fabs(x) == std::numeric_limits<F>::infinity() ? std::numeric_limits<F>::infinity()
                                                            : out;
}

// jax.lax.lgamma: log|Γ(x)|; +inf at the poles 0, -1, -2, … and at ±inf.
template <class F, class M>
SPMD_HOST_DEVICE SPMD_SPECIAL_INLINE F lgamma(F x) {
  const F unreflected = lgamma_unreflected<F, M>(lanczos_terms<F, M>(x));
  return lgamma_from<F, M>(x, unreflected, M::sin(lgamma_angle(x)));
}

template <class F, class M>
SPMD_HOST_DEVICE SPMD_SPECIAL_INLINE F digamma_unreflected(const LanczosTerms<F>& l) {
  F a_prime = F(0);
  SPMD_SPECIAL_UNROLL
  for (int k = 0; k < 8; ++k) {
    const F term = l.z + F(k + 1);
    a_prime = a_prime - F(lanczos_coefficient(k)) / (term * term);
  }
  return (l.log_t + a_prime / lanczos_sum(l.z)) - F(kLanczosG) / l.t;
}

template <class F>
SPMD_HOST_DEVICE SPMD_SPECIAL_INLINE F digamma_angle(F x) {
  return (x + std::fabs(std::floor(x + F(0.5)))) * F(kPi);
}

template <class F>
SPMD_HOST_DEVICE SPMD_SPECIAL_INLINE F digamma_from(F x, F unreflected, F sine, F cosine) {
  const F out = x < F(0.5) ? unreflected - (cosine * F(kPi)) / sine : unreflected;
  const bool pole = x <= F(0) && x == std::floor(x);
  return pole ? std::numeric_limits<F>::quiet_NaN() : out;
}

// jax.lax.digamma: ψ(x) = d/dx log Γ(x); NaN at the poles 0, -1, -2, … and at -inf.
template <class F, class M>
SPMD_HOST_DEVICE SPMD_SPECIAL_INLINE F digamma(F x) {
  const F unreflected = digamma_unreflected<F, M>(lanczos_terms<F, M>(x));
  F sine = F(1), cosine = F(0);
  if (x < F(0.5)) {
    const F angle = digamma_angle(x);
    sine = M::sin(angle);
    cosine = M::cos(angle);
  }
  return digamma_from(x, unreflected, sine, cosine);
}

// jax.lax.erf_inv of a float32: ±inf at ±1, NaN beyond.
template <class M>
SPMD_HOST_DEVICE SPMD_SPECIAL_INLINE float erf_inv(float x) {
  float w = -M::log1p(x * -x);
  const bool small = w < 5.0f;
  w = small ? w + -2.5f : std::sqrt(w) + -3.0f;
  // Giles' float32 polynomials, the piece for w < 5 and the one beyond.
  constexpr float low[9] = {2.81022636e-08f,  3.43273939e-07f, -3.5233877e-06f,
                            -4.39150654e-06f, 0.00021858087f,  -0.00125372503f,
                            -0.00417768164f,  0.246640727f,    1.50140941f};
  constexpr float high[9] = {-0.000200214257f, 0.000100950558f, 0.00134934322f,
                             -0.00367342844f,  0.00573950773f,  -0.0076224613f,
                             0.00943887047f,   1.00167406f,     2.83297682f};
  float p = small ? low[0] : high[0];
  SPMD_SPECIAL_UNROLL
  for (int k = 1; k < 9; ++k) p = std::fma(p, w, small ? low[k] : high[k]);
  return std::fabs(x) == 1.0f ? x * std::numeric_limits<float>::infinity() : p * x;
}

// jax.lax.erf_inv of a float64. The pieces' polynomials have 23, 19 and 17 coefficients: the
// first 17 steps are each piece's own, then the two pieces below 16 go on, then the first alone.
template <class M>
SPMD_HOST_DEVICE SPMD_SPECIAL_INLINE double erf_inv(double x) {
  double w = -M::log1p(x * -x);
  const bool lt625 = w < 6.25;
  const bool lt16 = w < 16.0;
  w = lt625 ? w - 3.125 : std::sqrt(w) - (lt16 ? 3.25 : 5.0);
  // Giles' float64 polynomials: w < 6.25 (23 coefficients), w < 16 (19) and beyond (17).
  constexpr double low[23] = {
      -3.6444120640178196996e-21, -1.685059138182016589e-19,  1.2858480715256400167e-18,
      1.115787767802518096e-17,   -1.333171662854620906e-16,  2.0972767875968561637e-17,
      6.6376381343583238325e-15,  -4.0545662729752068639e-14, -8.1519341976054721522e-14,
      2.6335093153082322977e-12,  -1.2975133253453532498e-11, -5.4154120542946279317e-11,
      1.051212273321532285e-09,   -4.1126339803469836976e-09, -2.9070369957882005086e-08,
      4.2347877827932403518e-07,  -1.3654692000834678645e-06, -1.3882523362786468719e-05,
      0.0001867342080340571352,   -0.00074070253416626697512, -0.0060336708714301490533,
      0.24015818242558961693,     1.6536545626831027356};
  constexpr double mid[19] = {
      2.2137376921775787049e-09, 9.0756561938885390979e-08, -2.7517406297064545428e-07,
      1.8239629214389227755e-08, 1.5027403968909827627e-06, -4.013867526981545969e-06,
      2.9234449089955446044e-06, 1.2475304481671778723e-05, -4.7318229009055733981e-05,
      6.8284851459573175448e-05, 2.4031110387097893999e-05, -0.0003550375203628474796,
      0.00095328937973738049703, -0.0016882755560235047313, 0.0024914420961078508066,
      -0.0037512085075692412107, 0.005370914553590063617,   1.0052589676941592334,
      3.0838856104922207635};
  constexpr double high[17] = {
      -2.7109920616438573243e-11, -2.5556418169965252055e-10, 1.5076572693500548083e-09,
      -3.7894654401267369937e-09, 7.6157012080783393804e-09,  -1.4960026627149240478e-08,
      2.9147953450901080826e-08,  -6.7711997758452339498e-08, 2.2900482228026654717e-07,
      -9.9298272942317002539e-07, 4.5260625972231537039e-06,  -1.9681778105531670567e-05,
      7.5995277030017761139e-05,  -0.00021503011930044477347, -0.00013871931833623122026,
      1.0103004648645343977,      4.8499064014085844221};
  const auto coefficient = [&](int k) {
    if (k >= 19 || lt625) return low[k];
    if (k >= 17 || lt16) return mid[k];
    return high[k];
  };
  double p = coefficient(0);
  SPMD_SPECIAL_UNROLL
  for (int k = 1; k < 17; ++k) p = std::fma(p, w, coefficient(k));
  if (lt16) {
    SPMD_SPECIAL_UNROLL
    for (int k = 17; k < 19; ++k) p = std::fma(p, w, coefficient(k));
  }
  if (lt625) {
    SPMD_SPECIAL_UNROLL
    for (int k = 19; k < 23; ++k) p = std::fma(p, w, coefficient(k));
  }
  return std::fabs(x) == 1.0 ? x * std::numeric_limits<double>::infinity() : p * x;
}

}  // namespace spmd::kernels::special
