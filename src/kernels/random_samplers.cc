#include "kernels/random_samplers.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <numbers>
#include <numeric>
#include <type_traits>
#include <utility>

#include "kernels/threefry.h"
#include "kernels/xla_math.h"
#include "kernels/ynn_math.h"
#include "spmd/error.h"

#if defined(__x86_64__)
#include <cpuid.h>
#endif

namespace spmd::kernels {
namespace {

// The float samplers in two builds, picked when the program loads: one for CPUs with AVX2 and
// fused multiply-add (x86-64-v3), where std::fma is one instruction and the loops vectorise 8
// wide, and the baseline, where std::fma is the C library's exact (and slow) emulation. Both give
// the same values.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define SPMD_SAMPLER_CLONES __attribute__((target_clones("arch=x86-64-v3", "default"), flatten))
#else
#define SPMD_SAMPLER_CLONES
#endif
// What the samplers call, inlined into each build (the baseline's code would run otherwise).
#define SPMD_SAMPLER_INLINE [[gnu::always_inline]] inline

// np.float32(np.sqrt(2)), the constant JAX's normal and truncated_normal multiply by.
constexpr float kSqrt2 = 1.41421356f;

// [0, 1) from 32 random bits: the top 23 as the mantissa of a float in [1, 2), less 1 (JAX's
// uniform: shift right by 32 - 23, or in 1.0's bits, bitcast, subtract 1).
SPMD_SAMPLER_INLINE float unit_f32(uint32_t bits) {
  return std::bit_cast<float>(bits >> 9 | 0x3f800000u) - 1.0f;
}
SPMD_SAMPLER_INLINE double unit_f64(uint64_t bits) {
  return std::bit_cast<double>(bits >> 12 | 0x3ff0000000000000u) - 1.0;
}

// JAX's uniform on [lo, hi): scaled and shifted in one fused multiply-add (as XLA's CPU code
// contracts it), then held at lo (lax.max) against rounding below.
template <typename T>
SPMD_SAMPLER_INLINE T scale(T unit, T lo, T hi) {
  return std::max(lo, std::fma(unit, hi - lo, lo));
}

// The body of erf_inv (below), inlined into the samplers.
SPMD_SAMPLER_INLINE float erf_inv_f32(float x) {
  // Giles, "Approximating the erfinv function" (GPU Computing Gems, 2011), single precision:
  // two polynomials in w = -log(1 - x^2), evaluated as XLA evaluates them.
  constexpr float kCentral[] = {2.81022636e-08f,  3.43273939e-07f, -3.5233877e-06f,
                                -4.39150654e-06f, 0.00021858087f,  -0.00125372503f,
                                -0.00417768164f,  0.246640727f,    1.50140941f};
  constexpr float kTail[] = {-0.000200214257f, 0.000100950558f, 0.00134934322f,
                             -0.00367342844f,  0.00573950773f,  -0.0076224613f,
                             0.00943887047f,   1.00167406f,     2.83297682f};
  const float w = -xla_log1p(x * -x);
  const bool central = w < 5.0f;
  const float t = central ? w + -2.5f : std::sqrt(w) + -3.0f;
  // Coefficients chosen one by one (not a pointer to either table): the loop stays vectorisable.
  float p = central ? kCentral[0] : kTail[0];
#pragma GCC unroll 8
  for (int k = 1; k < 9; ++k) p = std::fma(p, t, central ? kCentral[k] : kTail[k]);
  // erf_inv(±1) = ±inf.
  return std::fabs(x) == 1.0f ? x * std::numeric_limits<float>::infinity() : p * x;
}

// The standard normal of a value uniform on (-1, 1): sqrt(2) erf_inv(u).
SPMD_SAMPLER_INLINE float normal_of(float u) { return kSqrt2 * erf_inv_f32(u); }

// One distribution's value for each element, from its `kBits` random bits: the bits of a chunk
// first (a loop that vectorises), then their values.
template <typename T, int kBits, typename F>
void fill(const RandomBlock& b, std::byte* out, F value) {
  using Bits = std::conditional_t<kBits == 64, uint64_t, uint32_t>;
  constexpr int64_t kChunk = 256;
  Bits bits[kChunk];
  T* o = reinterpret_cast<T*>(out);
  for_each_row(b, [&](uint64_t first, int64_t j, int64_t n) {
    for (int64_t c0 = 0; c0 < n; c0 += kChunk) {
      const int64_t m = std::min(kChunk, n - c0);
      const uint64_t at = first + static_cast<uint64_t>(c0);
      for (int64_t c = 0; c < m; ++c) {
        bits[c] =
            static_cast<Bits>(bits_of(hash_index(b.key, at + static_cast<uint64_t>(c)), kBits));
      }
      for (int64_t c = 0; c < m; ++c) o[j + c0 + c] = value(bits[c]);
    }
  });
}

// A half type's parameters for JAX's uniform: the random bits drawn per element (16 for
// float16's 10-bit mantissa; 8 for bfloat16's 7, as JAX draws at least 8), shifted onto the
// mantissa of 1.0 (`one`'s bits).
template <typename H>
struct Half {
  int bits, mantissa;
  uint16_t one;
  H (*round)(float);
};
constexpr Half<float16> kFloat16{16, 10, 0x3c00, [](float f) { return to_float16(f); }};
constexpr Half<bfloat16> kBFloat16{8, 7, 0x3f80, [](float f) { return to_bfloat16(f); }};

// Whether XLA's CPU code does float16 arithmetic in float16 itself: on CPUs with AVX512-FP16 it
// does, and LLVM then contracts a multiply and an add into one float16 fused multiply-add,
// rounded once. Elsewhere (and for bfloat16 everywhere) each operation is widened to float32 and
// rounded back on its own. Seen with JAX 0.10.2 on a Sapphire Rapids CPU; on other
// architectures the widened form is assumed.
bool native_float16_arithmetic() {
#if defined(__x86_64__) && defined(__GNUC__)
  // CPUID leaf 7's EDX bit 23; avx512f as the compiler checks it also says the OS saves the
  // registers.
  static const bool native = [] {
    unsigned a = 0, b = 0, c = 0, d = 0;
    return __builtin_cpu_supports("avx512f") != 0 && __get_cpuid_count(7, 0, &a, &b, &c, &d) != 0 &&
           (d >> 23 & 1u) != 0;
  }();
  return native;
#else
  return false;
#endif
}

// `m * s + a`, exact in double (11-bit by 11-bit products, f16's exponents), rounded once to
// float16, as a float16 fused multiply-add rounds it.
float16 fma_float16(float m, float s, float a) {
  const double exact = static_cast<double>(m) * s + a;
#if defined(__FLT16_MAX__)
  return float16{std::bit_cast<uint16_t>(static_cast<_Float16>(exact))};
#else
  return to_float16(static_cast<float>(exact));
#endif
}

// JAX's uniform on [a, b) in half type H, then `then` of it: each operation of JAX's program
// rounded back to H, as XLA's CPU code computes half types (native_float16_arithmetic() says
// when the scale and shift are one rounding instead of two).
template <int kBits, typename H, typename Then>
void half_fill(const Half<H>& h, double a, double b, const RandomBlock& block, std::byte* out,
               Then then) {
  const H lo = h.round(static_cast<float>(a));
  const H hi = h.round(static_cast<float>(b));
  const float span = to_float(h.round(to_float(hi) - to_float(lo)));
  const float low = to_float(lo);
  // Where the span is 1, XLA drops the product and folds the two constant additions into one,
  // x + (lo - 1) rounded to H (gumbel's [tiny, 1) in float16: x - 1, tiny lost).
  const float folded = to_float(h.round(low - 1.0f));
  const bool fused = std::is_same_v<H, float16> && native_float16_arithmetic();
  const auto scaled = [&](float unit) -> H {
    if constexpr (std::is_same_v<H, float16>) {
      if (fused) return fma_float16(unit, span, low);
    }
    return h.round(to_float(h.round(unit * span)) + low);
  };
  fill<H, kBits>(block, out, [&](uint32_t bits) {
    const auto one_to_two = static_cast<uint16_t>(bits >> (h.bits - h.mantissa) | h.one);
    const float x = to_float(H{one_to_two});
    const H shifted = span == 1.0f ? h.round(x + folded) : scaled(x - 1.0f);
    return then(to_float(shifted) < low ? lo : shifted);
  });
}

// `f` with the Half parameters of `dtype` (float16 or bfloat16) and its bits' width.
bool is_half(DType t) { return t == DType::kFloat16 || t == DType::kBFloat16; }

template <typename F>
void with_half(DType dtype, F f) {
  if (dtype == DType::kFloat16) return f(kFloat16, std::integral_constant<int, 16>());
  f(kBFloat16, std::integral_constant<int, 8>());
}

SPMD_SAMPLER_CLONES void uniform(const Sampler& s, const RandomBlock& b, std::byte* out) {
  if (is_half(s.dtype)) {
    return with_half(s.dtype, [&](const auto& h, auto bits) {
      half_fill<decltype(bits)::value>(h, s.a, s.b, b, out, [](auto v) { return v; });
    });
  }
  if (s.dtype == DType::kFloat64) {
    return fill<double, 64>(
        b, out, [lo = s.a, hi = s.b](uint64_t bits) { return scale(unit_f64(bits), lo, hi); });
  }
  const auto lo = static_cast<float>(s.a);
  const auto hi = static_cast<float>(s.b);
  fill<float, 32>(b, out, [lo, hi](uint32_t bits) { return scale(unit_f32(bits), lo, hi); });
}

// normal and gumbel in a half type: the uniform in that type, then erf_inv or log computed in
// float32 (XLA widens them) and each result rounded back, as JAX's program does.
void normal_half(DType dtype, const RandomBlock& b, std::byte* out) {
  with_half(dtype, [&](const auto& h, auto bits) {
    const float sqrt2 = to_float(h.round(kSqrt2));
    const float below_one = to_float(h.round(-1.0f));
    // nextafter(-1, 0) in the half type: one unit of its mantissa above -1.
    const double lo = below_one + std::ldexp(1.0, -h.mantissa - 1);
    half_fill<decltype(bits)::value>(h, lo, 1.0, b, out, [&](auto u) {
      return h.round(sqrt2 * to_float(h.round(erf_inv_f32(to_float(u)))));
    });
  });
}

void gumbel_half(DType dtype, const RandomBlock& b, std::byte* out) {
  with_half(dtype, [&](const auto& h, auto bits) {
    // finfo.tiny: the smallest normal number.
    const double tiny = std::ldexp(1.0, dtype == DType::kFloat16 ? -14 : -126);
    half_fill<decltype(bits)::value>(h, tiny, 1.0, b, out, [&](auto u) {
      const float inner = to_float(h.round(xla_log(to_float(u))));
      return h.round(-to_float(h.round(xla_log(-inner))));
    });
  });
}

SPMD_SAMPLER_CLONES void normal(const RandomBlock& b, std::byte* out) {
  // JAX draws u uniform on [nextafter(-1, 0), 1).
  const float lo = std::nextafter(-1.0f, 0.0f);
  fill<float, 32>(b, out,
                  [lo](uint32_t bits) { return normal_of(scale(unit_f32(bits), lo, 1.0f)); });
}

// XLA's CPU erf of a float32 (its emitter's rational interpolant, Eigen's): an odd numerator over
// an even denominator in x², each by fused multiply-adds, ±1 from |x| = 3.8325 on.
float erf_f32(float x) {
  constexpr float kOne = 3.832506856900711f;
  if (std::fabs(x) >= kOne) return std::copysign(1.0f, x);
  const float x2 = x * x;
  float p = std::fma(x2, 0.00022905065861350646f, 0.0034082910107109506f);
  p = std::fma(x2, p, 0.050955695062380861f);
  p = std::fma(x2, p, 0.18520832239976145f);
  p = x * std::fma(x2, p, 1.128379143519084f);
  float q = std::fma(x2, -1.1791602954361697e-7f, 0.000023547966471313185f);
  for (float c : {0.0010179625278914885f, 0.014070470171167667f, 0.11098505178285362f,
                  0.49746925110067538f, 1.0f}) {
    q = std::fma(x2, q, c);
  }
  return p / q;
}

SPMD_SAMPLER_CLONES void truncated_normal(const Sampler& s, const RandomBlock& b, std::byte* out) {
  const auto lower = static_cast<float>(s.a);
  const auto upper = static_cast<float>(s.b);
  // JAX divides the bounds by sqrt(2); XLA multiplies by the float32 reciprocal instead.
  constexpr float kInvSqrt2 = 0.70710677f;
  const float ea = erf_f32(lower * kInvSqrt2);
  const float eb = erf_f32(upper * kInvSqrt2);
  // Held inside the open interval (lower, upper) against rounding, as JAX clips.
  const float above = std::nextafter(lower, std::numeric_limits<float>::infinity());
  const float below = std::nextafter(upper, -std::numeric_limits<float>::infinity());
  fill<float, 32>(b, out, [=](uint32_t bits) {
    return std::min(below, std::max(above, normal_of(scale(unit_f32(bits), ea, eb))));
  });
}

SPMD_SAMPLER_CLONES void gumbel(const RandomBlock& b, std::byte* out) {
  const float tiny = std::numeric_limits<float>::min();
  fill<float, 32>(b, out, [tiny](uint32_t bits) {
    return -xla_log(-xla_log(scale(unit_f32(bits), tiny, 1.0f)));
  });
}

// --- exponential, laplace, logistic, cauchy, lognormal: a uniform on JAX's interval, then JAX's
// function of it. `r` rounds each operation's result to the sample's type: nothing in float32,
// to the half type and back in float16 and bfloat16 (XLA widens each operation to float32).

// JAX's interval for the uniform under each, for a type with `mantissa` bits.
std::pair<double, double> transform_interval(Distribution d, int mantissa) {
  switch (d) {
    case Distribution::kLaplace:  // [-1 + epsneg, 1)
      return {-1.0 + std::ldexp(1.0, -mantissa - 1), 1.0};
    case Distribution::kLogistic:  // [tiny, 1)
      return {mantissa == 10 ? std::ldexp(1.0, -14) : std::ldexp(1.0, -126), 1.0};
    case Distribution::kCauchy:  // [eps, 1)
      return {std::ldexp(1.0, -mantissa), 1.0};
    default:  // exponential: [0, 1)
      return {0.0, 1.0};
  }
}

// JAX's function of the uniform `u`. For lognormal, `u` is erf_inv of its uniform and `param`
// sqrt(2) sigma; for cauchy, `param` is pi in the sample's type.
template <Distribution D, typename R>
SPMD_SAMPLER_INLINE float transform(float u, float param, R r) {
  if constexpr (D == Distribution::kExponential) {
    return -r(xla_log1p(-u));  // -log1p(-u)
  } else if constexpr (D == Distribution::kLaplace) {
    const float sign = u > 0.0f ? 1.0f : (u < 0.0f ? -1.0f : 0.0f);
    return r(sign * r(xla_log1p(-std::fabs(u))));  // sign(u) log1p(-|u|)
  } else if constexpr (D == Distribution::kLogistic) {
    return r(r(xla_log(u)) - r(xla_log1p(-u)));  // log(u) - log1p(-u)
  } else if constexpr (D == Distribution::kCauchy) {
    return r(std::tan(r(param * r(u - 0.5f))));  // tan(pi (u - 1/2)), the C library's tanf
  } else if constexpr (D == Distribution::kErfInv) {
    return u;  // erf_inv(u) itself
  } else {
    return r(xla_exp(r(u * param)));  // lognormal: exp(erf_inv(u) (sqrt(2) sigma))
  }
}

template <Distribution D>
SPMD_SAMPLER_CLONES void transformed(const Sampler& s, const RandomBlock& b, std::byte* out) {
  const auto same = [](float v) { return v; };
  if constexpr (D == Distribution::kLognormal || D == Distribution::kErfInv) {
    // sqrt(2) erf_inv(u) sigma with the constants' product folded first, as XLA folds it.
    const float lo = std::nextafter(-1.0f, 0.0f);
    const float scale_by = kSqrt2 * static_cast<float>(s.a);
    return fill<float, 32>(b, out, [=](uint32_t bits) {
      return transform<D>(erf_inv_f32(scale(unit_f32(bits), lo, 1.0f)), scale_by, same);
    });
  }
  const auto [a, z] = transform_interval(D, 23);
  const auto lo = static_cast<float>(a);
  const auto hi = static_cast<float>(z);
  constexpr float pi = std::numbers::pi_v<float>;
  fill<float, 32>(
      b, out, [=](uint32_t bits) { return transform<D>(scale(unit_f32(bits), lo, hi), pi, same); });
}

template <Distribution D>
void transformed_half(const Sampler& s, const RandomBlock& b, std::byte* out) {
  with_half(s.dtype, [&](const auto& h, auto bits) {
    const auto r = [&](float v) { return to_float(h.round(v)); };
    if constexpr (D == Distribution::kErfInv) {  // lognormal's draw, rounded to the half type
      const double lo = r(-1.0f) + std::ldexp(1.0, -h.mantissa - 1);
      return half_fill<decltype(bits)::value>(
          h, lo, 1.0, b, out, [&](auto u) { return h.round(erf_inv_f32(to_float(u))); });
    }
    if constexpr (D == Distribution::kLognormal) {
      // Each step rounded to the half type. In float16 XLA folds sqrt(2) sigma first, as in
      // float32; in bfloat16 it multiplies in JAX's order (seen with JAX 0.10.2).
      const float sqrt2 = r(kSqrt2);
      const float sigma = r(static_cast<float>(s.a));
      const bool folded = s.dtype == DType::kFloat16;
      const double lo = r(-1.0f) + std::ldexp(1.0, -h.mantissa - 1);
      return half_fill<decltype(bits)::value>(h, lo, 1.0, b, out, [&](auto u) {
        const float e = r(erf_inv_f32(to_float(u)));
        const float v =
            folded ? transform<D>(e, r(sqrt2 * sigma), r) : transform<D>(r(sqrt2 * e), sigma, r);
        return h.round(v);
      });
    }
    const auto [lo, hi] = transform_interval(D, h.mantissa);
    const float pi = r(std::numbers::pi_v<float>);
    half_fill<decltype(bits)::value>(
        h, lo, hi, b, out, [&](auto u) { return h.round(transform<D>(to_float(u), pi, r)); });
  });
}

template <Distribution D>
void transformed_any(const Sampler& s, const RandomBlock& b, std::byte* out) {
  return is_half(s.dtype) ? transformed_half<D>(s, b, out) : transformed<D>(s, b, out);
}

// XLA's remainder: x % 0 is x.
template <typename U>
U rem(U x, U y) {
  return y == 0 ? x : static_cast<U>(x % y);
}

// JAX's randint: two draws of the dtype's width from the key's two halves (split(key)), combined
// modulo the span as a number of twice the width, added to minval.
template <typename T>
void randint(const Sampler& s, const RandomBlock& b, std::byte* out) {
  using U = std::make_unsigned_t<T>;
  constexpr int kBits = sizeof(T) * 8;
  const auto low = static_cast<T>(s.low);
  const auto high = static_cast<T>(s.high);
  auto span = static_cast<U>(static_cast<U>(high) - static_cast<U>(low));
  if (high <= low) span = 1;  // an empty range gives minval (jax#222)
  if (s.high_past_range && high > low) span = static_cast<U>(span + 1);  // may wrap to 0: all
  U multiplier = rem(static_cast<U>(U{1} << (kBits / 2)), span);
  multiplier = rem(static_cast<U>(multiplier * multiplier), span);
  const auto k1 = hash_index(b.key, 0);
  const auto k2 = hash_index(b.key, 1);
  T* o = reinterpret_cast<T*>(out);
  for_each_row(b, [&](uint64_t first, int64_t j, int64_t n) {
    for (int64_t c = 0; c < n; ++c) {
      const auto higher = static_cast<U>(bits_of(hash_index(k1, first + c), kBits));
      const auto lower = static_cast<U>(bits_of(hash_index(k2, first + c), kBits));
      const auto offset = rem(
          static_cast<U>(static_cast<U>(rem(higher, span) * multiplier) + rem(lower, span)), span);
      o[j + c] = static_cast<T>(static_cast<U>(low) + offset);
    }
  });
}

void randint(const Sampler& s, const RandomBlock& b, std::byte* out) {
  switch (s.dtype) {
    case DType::kInt64:
      return randint<int64_t>(s, b, out);
    case DType::kUInt32:
      return randint<uint32_t>(s, b, out);
    case DType::kUInt64:
      return randint<uint64_t>(s, b, out);
    default:
      return randint<int32_t>(s, b, out);
  }
}

}  // namespace

std::string_view distribution_name(Distribution d) {
  switch (d) {
    case Distribution::kUniform:
      return "uniform";
    case Distribution::kNormal:
      return "normal";
    case Distribution::kTruncatedNormal:
      return "truncated_normal";
    case Distribution::kGumbel:
      return "gumbel";
    case Distribution::kRandint:
      return "randint";
    case Distribution::kExponential:
      return "exponential";
    case Distribution::kLaplace:
      return "laplace";
    case Distribution::kLogistic:
      return "logistic";
    case Distribution::kCauchy:
      return "cauchy";
    case Distribution::kLognormal:
      return "lognormal";
    case Distribution::kErfInv:
      return "erf_inv";
  }
  return "?";
}

bool supported(const Sampler& s) {
  switch (s.distribution) {
    case Distribution::kUniform:
      return s.dtype == DType::kFloat16 || s.dtype == DType::kBFloat16 ||
             s.dtype == DType::kFloat32 || s.dtype == DType::kFloat64;
    case Distribution::kRandint:
      return s.dtype == DType::kInt32 || s.dtype == DType::kInt64 || s.dtype == DType::kUInt32 ||
             s.dtype == DType::kUInt64;
    case Distribution::kTruncatedNormal:
      return s.dtype == DType::kFloat32;
    default:  // normal, gumbel and the functions of a uniform
      return s.dtype == DType::kFloat32 || is_half(s.dtype);
  }
}

void random_sample(const Sampler& s, const RandomBlock& b, std::byte* out) {
  switch (s.distribution) {
    case Distribution::kUniform:
      return uniform(s, b, out);
    case Distribution::kNormal:
      return is_half(s.dtype) ? normal_half(s.dtype, b, out) : normal(b, out);
    case Distribution::kTruncatedNormal:
      return truncated_normal(s, b, out);
    case Distribution::kGumbel:
      return is_half(s.dtype) ? gumbel_half(s.dtype, b, out) : gumbel(b, out);
    case Distribution::kRandint:
      return randint(s, b, out);
    case Distribution::kExponential:
      return transformed_any<Distribution::kExponential>(s, b, out);
    case Distribution::kLaplace:
      return transformed_any<Distribution::kLaplace>(s, b, out);
    case Distribution::kLogistic:
      return transformed_any<Distribution::kLogistic>(s, b, out);
    case Distribution::kCauchy:
      return transformed_any<Distribution::kCauchy>(s, b, out);
    case Distribution::kLognormal:
      return transformed_any<Distribution::kLognormal>(s, b, out);
    case Distribution::kErfInv:
      return transformed_any<Distribution::kErfInv>(s, b, out);
  }
}

std::vector<int64_t> random_permutation(std::array<uint32_t, 2> key, int64_t n) {
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), int64_t{0});
  const double uint32_max = std::numeric_limits<uint32_t>::max();
  const auto rounds = static_cast<int>(std::ceil(
      3.0 * std::log(std::max<double>(1.0, static_cast<double>(n))) / std::log(uint32_max)));
  std::vector<uint32_t> sort_keys(order.size());
  std::vector<std::pair<uint32_t, int64_t>> pairs(order.size());
  for (int r = 0; r < rounds; ++r) {
    const auto subkey = hash_index(key, 1);
    key = hash_index(key, 0);
    for (size_t i = 0; i < order.size(); ++i) {
      pairs[i] = {static_cast<uint32_t>(bits_of(hash_index(subkey, i), 32)), order[i]};
    }
    std::stable_sort(pairs.begin(), pairs.end(),
                     [](const auto& x, const auto& y) { return x.first < y.first; });
    for (size_t i = 0; i < order.size(); ++i) order[i] = pairs[i].second;
  }
  return order;
}

void random_permute(std::array<uint32_t, 2> key, size_t element_size, const std::byte* in,
                    const Shape& shape, int axis, std::byte* out) {
  const int64_t n = shape[static_cast<size_t>(axis)];
  const std::vector<int64_t> order = random_permutation(key, n);
  int64_t outer = 1;
  for (int d = 0; d < axis; ++d) outer *= shape[static_cast<size_t>(d)];
  const size_t inner =
      element_size * static_cast<size_t>(shape_size(shape) / std::max<int64_t>(1, outer * n));
  for (int64_t o = 0; o < outer; ++o) {
    const std::byte* from = in + static_cast<size_t>(o * n) * inner;
    std::byte* to = out + static_cast<size_t>(o * n) * inner;
    for (int64_t k = 0; k < n; ++k) {
      std::memcpy(to + static_cast<size_t>(k) * inner, from + static_cast<size_t>(order[k]) * inner,
                  inner);
    }
  }
}

float erf_inv(float x) { return erf_inv_f32(x); }

namespace {

// Key i of jax.random.split(key, m): the hash of counter (0, i), both words (random_bits.h).
std::array<uint32_t, 2> split_key(std::array<uint32_t, 2> key, uint32_t i) {
  return threefry_2x32(key, {0, i});
}

// The 32 bits of a one-element draw from `key`: y0 ^ y1 of counter (0, 0).
uint32_t scalar_bits(std::array<uint32_t, 2> key) {
  const auto y = threefry_2x32(key, {0, 0});
  return y[0] ^ y[1];
}

// jax.random.normal(key, ()) and uniform(key, ()) in float32.
float scalar_normal(std::array<uint32_t, 2> key) {
  return normal_of(scale(unit_f32(scalar_bits(key)), std::nextafter(-1.0f, 0.0f), 1.0f));
}
float scalar_uniform(std::array<uint32_t, 2> key) { return unit_f32(scalar_bits(key)); }

// JAX's _gamma_one (jax/_src/random/core.py), statement for statement. Its loops end for every
// alpha: a NaN (from a NaN alpha, or one below -2/3 whose d is negative) fails both loops'
// conditions, and the result is NaN, as JAX's.
SPMD_SAMPLER_INLINE float gamma_one(std::array<uint32_t, 2> key, float alpha_orig, GammaForm form) {
  constexpr float kThird = 1.0f / 3.0f;
  const bool boost_mask = alpha_orig >= 1.0f;
  const float alpha = boost_mask ? alpha_orig : alpha_orig + 1.0f;
  const float d = alpha - kThird;
  const float c = kThird * xla_rsqrt(d);  // XLA rewrites the quotient so
  const std::array<uint32_t, 2> subkey = split_key(key, 1);
  key = split_key(key, 0);
  float X = 0.0f, V = 1.0f, U = 2.0f;
  // The loop runs while the draw is rejected (JAX's _cond_fn); products feeding a sum are fused,
  // as XLA's CPU code contracts them.
  const auto rejected = [&] {
    return U >= std::fma(-0.0331f, X * X, 1.0f) &&
           xla_log(U) >= std::fma(X, 0.5f, d * ((1.0f - V) + xla_log(V)));
  };
  while (rejected()) {
    const std::array<uint32_t, 2> x_key = split_key(key, 1), u_key = split_key(key, 2);
    key = split_key(key, 0);
    std::array<uint32_t, 2> k = x_key;
    float x = 0.0f, v = -1.0f;
    while (v <= 0.0f) {
      const std::array<uint32_t, 2> draw = split_key(k, 1);
      k = split_key(k, 0);
      x = scalar_normal(draw);
      v = std::fma(x, c, 1.0f);
    }
    X = x * x;
    V = (v * v) * v;
    U = scalar_uniform(u_key);
  }
  if (form != GammaForm::kSample) {
    const float log_samples = xla_log1p(-scalar_uniform(subkey));  // -exponential(subkey)
    const float log_boost =
        boost_mask || log_samples == 0.0f ? 0.0f : log_samples * (1.0f / alpha_orig);
    if (form == GammaForm::kLogAsYnn) return (ynn_log(d) + ynn_log(V)) + log_boost;
    return (xla_log(d) + xla_log(V)) + log_boost;
  }
  const float samples = 1.0f - scalar_uniform(subkey);
  const float boost = boost_mask ? 1.0f : std::pow(samples, 1.0f / alpha_orig);
  return (d * V) * boost;
}

// jax.random.uniform(key, shape)'s element at flat index e, float32.
float uniform_at(std::array<uint32_t, 2> key, int64_t e) {
  const auto y = threefry_2x32(
      key, {static_cast<uint32_t>(static_cast<uint64_t>(e) >> 32), static_cast<uint32_t>(e)});
  return unit_f32(y[0] ^ y[1]);
}

// XLA's log, -inf at 0 (a uniform draw can be 0).
float log_or_minus_inf(float x) {
  return x == 0.0f ? -std::numeric_limits<float>::infinity() : xla_log(x);
}

// Knuth's count for one rate below 10: uniforms from the shared subkeys multiplied (their
// logarithms added) until the product falls to exp(-lam) or below, less one.
int32_t poisson_knuth(float lam, int64_t e,
                      const std::function<std::array<uint32_t, 2>(size_t)>& subkey) {
  int32_t k = 0;
  float log_prod = 0.0f;
  for (size_t t = 0; log_prod > -lam; ++t) {
    ++k;
    log_prod += log_or_minus_inf(uniform_at(subkey(t), e));
  }
  return k - 1;
}

// XLA's float-to-int32 conversion: saturating, NaN to 0.
int32_t to_int32(float k) {
  if (k != k) return 0;
  if (k >= 2147483648.0f) return std::numeric_limits<int32_t>::max();
  if (k <= -2147483648.0f) return std::numeric_limits<int32_t>::min();
  return static_cast<int32_t>(k);
}

// Hormann's transformed rejection over all n rates, round after round until every one has
// accepted; k_out holds each one's last accepted draw. Products feeding sums fused as XLA fuses
// them.
void poisson_rejection(std::array<uint32_t, 2> key, const std::vector<float>& lam,
                       std::vector<float>& k_out) {
  const size_t n = lam.size();
  std::vector<float> log_lam(n), b(n), a(n), inv_alpha(n), v_r(n);
  for (size_t e = 0; e < n; ++e) {
    log_lam[e] = xla_log(lam[e]);
    b[e] = std::fma(2.53f, std::sqrt(lam[e]), 0.931f);
    a[e] = std::fma(0.02483f, b[e], -0.059f);
    inv_alpha[e] = 1.1239f + 1.1328f / (b[e] - 3.4f);
    v_r[e] = 0.9277f - 3.6224f / (b[e] - 2.0f);
  }
  std::vector<bool> accepted(n, false);
  size_t remaining = n;
  for (int64_t round = 0; remaining > 0; ++round) {
    if (round == (int64_t{1} << 20)) {
      throw InvalidArgument(
          "random.poisson: the rejection sampler did not accept within 2^20 "
          "rounds (an infinite rate?)");
    }
    const std::array<uint32_t, 2> draw_u = split_key(key, 1), draw_v = split_key(key, 2);
    key = split_key(key, 0);
    for (size_t e = 0; e < n; ++e) {
      const auto i = static_cast<int64_t>(e);
      const float u = uniform_at(draw_u, i) - 0.5f;
      const float v = uniform_at(draw_v, i);
      const float us = 0.5f - std::fabs(u);
      const float k = std::floor(std::fma(2.0f * a[e] / us + b[e], u, lam[e]) + 0.43f);
      const float s = log_or_minus_inf(v * inv_alpha[e] / (a[e] / (us * us) + b[e]));
      const float t = std::fma(k, log_lam[e], -lam[e]) - std::lgamma(k + 1.0f);
      const bool accept1 = us >= 0.07f && v <= v_r[e];
      const bool reject = k < 0.0f || (us < 0.013f && v > us);
      if (accept1 || (!reject && s <= t)) {
        k_out[e] = k;
        if (!accepted[e]) {
          accepted[e] = true;
          --remaining;
        }
      }
    }
  }
}

SPMD_SAMPLER_CLONES void gamma_all(std::array<uint32_t, 2> key, const float* alpha, int64_t n,
                                   GammaForm form, float* out) {
  for (int64_t i = 0; i < n; ++i) {
    out[i] = gamma_one(split_key(key, static_cast<uint32_t>(i)), alpha[i], form);
  }
}

}  // namespace

void random_gamma(std::array<uint32_t, 2> key, const float* alpha, int64_t n, GammaForm form,
                  float* out) {
  gamma_all(key, alpha, n, form, out);
}

void random_poisson(std::array<uint32_t, 2> key, const float* lam, int64_t n, int32_t* out) {
  // Knuth's subkeys, one per round, shared by every element: made as far as the longest needs.
  std::vector<std::array<uint32_t, 2>> subkeys;
  std::array<uint32_t, 2> rng = key;
  const auto subkey = [&](size_t t) {
    while (subkeys.size() <= t) {
      subkeys.push_back(split_key(rng, 1));
      rng = split_key(rng, 0);
    }
    return subkeys[t];
  };
  std::vector<float> lam_rejection(static_cast<size_t>(n));
  bool any_rejection = false;
  for (int64_t e = 0; e < n; ++e) {
    const bool knuth = std::isnan(lam[e]) || lam[e] < 10.0f;
    lam_rejection[static_cast<size_t>(e)] = knuth ? 1e5f : lam[e];
    any_rejection |= !knuth;
    if (knuth) out[e] = poisson_knuth(lam[e], e, subkey);
  }
  if (any_rejection) {
    std::vector<float> k_out(static_cast<size_t>(n), -1.0f);
    poisson_rejection(key, lam_rejection, k_out);
    for (int64_t e = 0; e < n; ++e) {
      if (!(std::isnan(lam[e]) || lam[e] < 10.0f)) out[e] = to_int32(k_out[static_cast<size_t>(e)]);
    }
  }
  for (int64_t e = 0; e < n; ++e) {
    if (lam[e] == 0.0f) out[e] = 0;
  }
}

}  // namespace spmd::kernels
