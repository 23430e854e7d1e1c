#include "kernels/mask_ops.h"

#include <Eigen/Core>
#include <algorithm>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "kernels/dispatch.h"
#include "kernels/float_environment.h"
#include "kernels/operand_reader.h"

namespace spmd::kernels {
namespace {

// Unsigned integers of each element width that may alias any object, so that a float buffer
// is read and written through them without breaking the aliasing rules.
using Bits8 = uint8_t;
using Bits16 [[gnu::may_alias]] = uint16_t;
using Bits32 [[gnu::may_alias]] = uint32_t;
using Bits64 [[gnu::may_alias]] = uint64_t;

template <class U>
void select_as(Input cond, Input a, Input b, std::byte* out, int64_t n) {
  auto* target = reinterpret_cast<U*>(out);
  with_reader<uint8_t>(cond, n, [&](auto c) {
    with_reader<U>(a, n, [&](auto x) {
      with_reader<U>(b, n, [&](auto y) {
        for (int64_t i = 0; i < n; ++i) {
          // All ones where the condition holds: x's bits there, y's elsewhere.
          const auto mask = static_cast<U>(U{0} - static_cast<U>(c[i] != 0));
          target[i] = static_cast<U>((x[i] & mask) | (y[i] & static_cast<U>(~mask)));
        }
      });
    });
  });
}

template <class T>
void from_bool(Input a, std::byte* out, int64_t n) {
  auto* target = reinterpret_cast<T*>(out);
  with_reader<uint8_t>(a, n, [&](auto c) {
    for (int64_t i = 0; i < n; ++i) target[i] = static_cast<T>(c[i] != 0);
  });
}

// One packet of F's maximum or minimum, as jnp's: x where x is NaN, else y where y is, else for
// two zeros x + y (max: +0 unless both are -0) or -(-x - y) (min), else the max (min)
// instruction's result. Where the thread treats denormals as zero (XLA's float environment,
// float_environment.h) the zero test, the sum and the instruction all see a subnormal as zero,
// so a subnormal result comes out flushed, as XLA's does; a select of bits in the instruction's
// place would keep it, and a compiler's vectorised `x > y ? x : y` may be either, so the
// instruction is named here (Eigen's pmax and pmin). The selects move bits: a NaN's payload is
// kept.
template <bool kMaximum, class P>
P max_min_packet(const P& x, const P& y) {
  namespace e = Eigen::internal;
  const P zero = e::pset1<P>(0);
  const P both_zero = e::pand(e::pcmp_eq(x, zero), e::pcmp_eq(y, zero));
  const P zeros = kMaximum ? e::padd(x, y) : e::pnegate(e::psub(e::pnegate(x), y));
  const P r = e::pselect(both_zero, zeros, kMaximum ? e::pmax(x, y) : e::pmin(x, y));
  return e::pselect(e::pcmp_eq(x, x), e::pselect(e::pcmp_eq(y, y), r, y), x);
}

// The same over n elements in Eigen's packets, the tail as one packet padded with zeros.
template <class F, bool kMaximum>
void max_min_as(Input a, Input b, std::byte* out, int64_t n) {
  namespace e = Eigen::internal;
  using P = typename e::packet_traits<F>::type;
  constexpr int64_t kLanes = e::packet_traits<F>::size;
  const auto* x = reinterpret_cast<const F*>(a.data);
  const auto* y = reinterpret_cast<const F*>(b.data);
  auto* target = reinterpret_cast<F*>(out);
  const bool x_all = a.elements == n, y_all = b.elements == n;
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    const P px = x_all ? e::ploadu<P>(x + i) : e::pset1<P>(x[0]);
    const P py = y_all ? e::ploadu<P>(y + i) : e::pset1<P>(y[0]);
    e::pstoreu(target + i, max_min_packet<kMaximum>(px, py));
  }
  if (i == n) return;
  F xs[kLanes] = {}, ys[kLanes] = {}, rs[kLanes];
  for (int64_t l = 0; i + l < n; ++l) {
    xs[l] = x_all ? x[i + l] : x[0];
    ys[l] = y_all ? y[i + l] : y[0];
  }
  e::pstoreu(rs, max_min_packet<kMaximum>(e::ploadu<P>(xs), e::ploadu<P>(ys)));
  std::copy_n(rs, n - i, target + i);
}

// A 16-bit float's bits (float16's or bfloat16's) as an int16 whose order is the values' (NaN
// aside): negative values' magnitude bits flipped, so that -0 (0x8000) becomes -1, just below
// +0. Its own inverse.
inline uint16_t half_key(uint16_t h) {
  return static_cast<uint16_t>(h ^ ((static_cast<int16_t>(h) >> 15) & 0x7fff));
}

// A 16-bit float format's bits: float16's (5 exponent bits; a NaN through float32 and back
// becomes the one quiet NaN of its sign) or bfloat16's (8; a NaN keeps its payload, made quiet:
// widening and rounding it back are shifts).
struct Float16Bits {
  static constexpr uint16_t kExponent = 0x7c00, kQuiet = 0x0200;
  static constexpr bool kKeepsPayload = false;
};
struct BFloat16Bits {
  static constexpr uint16_t kExponent = 0x7f80, kQuiet = 0x0040;
  static constexpr bool kKeepsPayload = true;
};

template <class F>
inline bool half_is_nan(uint16_t h) {
  return (h & 0x7fff) > F::kExponent;
}

// What widening, a float32 operation returning the NaN operand and rounding back give h.
template <class F>
inline uint16_t half_quiet_nan(uint16_t h) {
  if constexpr (F::kKeepsPayload) return static_cast<uint16_t>(h | F::kQuiet);
  return static_cast<uint16_t>((h & 0x8000) | F::kExponent | F::kQuiet);
}

// The max or min of two 16-bit floats on their keys. With kFlush, a subnormal operand is read
// as the zero of its sign, as float32 arithmetic reads a widened bfloat16 subnormal (a float32
// subnormal) on a thread that reads subnormals as zero; its result is then that zero too.
template <class F, bool kMaximum, bool kFlush>
void half_max_min_as(Input a, Input b, std::byte* out, int64_t n) {
  auto* target = reinterpret_cast<uint16_t*>(out);
  with_reader<uint16_t>(a, n, [&](auto x) {
    with_reader<uint16_t>(b, n, [&](auto y) {
#pragma GCC ivdep
      for (int64_t i = 0; i < n; ++i) {
        // A subnormal (exponent bits 0) loses its magnitude where the thread flushes.
        const auto fx =
            static_cast<uint16_t>(kFlush && (x[i] & F::kExponent) == 0 ? x[i] & 0x8000 : x[i]);
        const auto fy =
            static_cast<uint16_t>(kFlush && (y[i] & F::kExponent) == 0 ? y[i] & 0x8000 : y[i]);
        const auto kx = static_cast<int16_t>(half_key(fx));
        const auto ky = static_cast<int16_t>(half_key(fy));
        uint16_t r =
            half_key(static_cast<uint16_t>(kMaximum ? std::max(kx, ky) : std::min(kx, ky)));
        r = half_is_nan<F>(y[i]) ? half_quiet_nan<F>(y[i]) : r;
        target[i] = half_is_nan<F>(x[i]) ? half_quiet_nan<F>(x[i]) : r;
      }
    });
  });
}

#if defined(__x86_64__) && defined(__GNUC__)
#define SPMD_MASK_OPS_AVX2 1
// max_min_packet's operations in AVX's eight float32 (four float64) lanes, the same instructions
// Eigen's SSE packets name, operands in the same order (pmax(x, y) is maxps(y, x)): Eigen picks
// its packets when this file is compiled, for the baseline, so its packets are four lanes even
// in the x86-64-v3 build. A float16 maximum, widened a block at a time, ran at 0.3x JAX's speed
// through them (spmd-bench cores).
struct Avx2Float {
  using P = __m256;
  static constexpr int64_t kLanes = 8;
  [[gnu::target("avx2")]] static P load(const float* p) { return _mm256_loadu_ps(p); }
  [[gnu::target("avx2")]] static P set1(float v) { return _mm256_set1_ps(v); }
  [[gnu::target("avx2")]] static void store(float* p, P v) { _mm256_storeu_ps(p, v); }
  [[gnu::target("avx2")]] static P eq(P a, P b) { return _mm256_cmp_ps(a, b, _CMP_EQ_OQ); }
  [[gnu::target("avx2")]] static P both(P a, P b) { return _mm256_and_ps(a, b); }
  [[gnu::target("avx2")]] static P add(P a, P b) { return _mm256_add_ps(a, b); }
  [[gnu::target("avx2")]] static P sub(P a, P b) { return _mm256_sub_ps(a, b); }
  [[gnu::target("avx2")]] static P neg(P a) { return _mm256_xor_ps(a, _mm256_set1_ps(-0.0f)); }
  [[gnu::target("avx2")]] static P max(P a, P b) { return _mm256_max_ps(b, a); }
  [[gnu::target("avx2")]] static P min(P a, P b) { return _mm256_min_ps(b, a); }
  [[gnu::target("avx2")]] static P select(P mask, P a, P b) { return _mm256_blendv_ps(b, a, mask); }
};
struct Avx2Double {
  using P = __m256d;
  static constexpr int64_t kLanes = 4;
  [[gnu::target("avx2")]] static P load(const double* p) { return _mm256_loadu_pd(p); }
  [[gnu::target("avx2")]] static P set1(double v) { return _mm256_set1_pd(v); }
  [[gnu::target("avx2")]] static void store(double* p, P v) { _mm256_storeu_pd(p, v); }
  [[gnu::target("avx2")]] static P eq(P a, P b) { return _mm256_cmp_pd(a, b, _CMP_EQ_OQ); }
  [[gnu::target("avx2")]] static P both(P a, P b) { return _mm256_and_pd(a, b); }
  [[gnu::target("avx2")]] static P add(P a, P b) { return _mm256_add_pd(a, b); }
  [[gnu::target("avx2")]] static P sub(P a, P b) { return _mm256_sub_pd(a, b); }
  [[gnu::target("avx2")]] static P neg(P a) { return _mm256_xor_pd(a, _mm256_set1_pd(-0.0)); }
  [[gnu::target("avx2")]] static P max(P a, P b) { return _mm256_max_pd(b, a); }
  [[gnu::target("avx2")]] static P min(P a, P b) { return _mm256_min_pd(b, a); }
  [[gnu::target("avx2")]] static P select(P mask, P a, P b) { return _mm256_blendv_pd(b, a, mask); }
};

// max_min_packet, step for step.
template <bool kMaximum, class V>
[[gnu::target("avx2"), gnu::always_inline]] inline typename V::P max_min_avx2(typename V::P x,
                                                                              typename V::P y) {
  const auto zero = V::set1(0);
  const auto both_zero = V::both(V::eq(x, zero), V::eq(y, zero));
  const auto zeros = kMaximum ? V::add(x, y) : V::neg(V::sub(V::neg(x), y));
  const auto r = V::select(both_zero, zeros, kMaximum ? V::max(x, y) : V::min(x, y));
  return V::select(V::eq(x, x), V::select(V::eq(y, y), r, y), x);
}

// max_min_as in AVX's lanes, the tail as one packet padded with zeros.
template <class F, bool kMaximum, class V>
[[gnu::target("avx2")]] void max_min_avx2_as(Input a, Input b, std::byte* out, int64_t n) {
  const auto* x = reinterpret_cast<const F*>(a.data);
  const auto* y = reinterpret_cast<const F*>(b.data);
  auto* target = reinterpret_cast<F*>(out);
  const bool x_all = a.elements == n, y_all = b.elements == n;
  int64_t i = 0;
  for (; i + V::kLanes <= n; i += V::kLanes) {
    const auto px = x_all ? V::load(x + i) : V::set1(x[0]);
    const auto py = y_all ? V::load(y + i) : V::set1(y[0]);
    V::store(target + i, max_min_avx2<kMaximum, V>(px, py));
  }
  if (i == n) return;
  F xs[V::kLanes] = {}, ys[V::kLanes] = {}, rs[V::kLanes];
  for (int64_t l = 0; i + l < n; ++l) {
    xs[l] = x_all ? x[i + l] : x[0];
    ys[l] = y_all ? y[i + l] : y[0];
  }
  V::store(rs, max_min_avx2<kMaximum, V>(V::load(xs), V::load(ys)));
  std::copy_n(rs, n - i, target + i);
}

bool avx2_runs() {
  static const bool runs = __builtin_cpu_supports("avx2");
  return runs;
}
#endif

}  // namespace

// Each entry point is built for x86-64-v3 (AVX2: eight float32 lanes and a blend instruction)
// and the baseline (SSE2: four lanes, blends of three instructions), picked at load time, with
// the loops it calls inlined into each. Only direct calls are inlined: a loop called through a
// pointer runs its one out-of-line copy, built for the baseline (the float16 and bfloat16
// maximum did, at 0.52 and 0.73 ms over 4096 x 2048 against 0.31 with their calls direct).
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define SPMD_MASK_OPS_CLONES __attribute__((target_clones("arch=x86-64-v3", "default"), flatten))
#else
#define SPMD_MASK_OPS_CLONES
#endif

SPMD_MASK_OPS_CLONES
bool select_bits(size_t size, Input cond, Input a, Input b, std::byte* out, int64_t n) {
  switch (size) {
    case 1:
      select_as<Bits8>(cond, a, b, out, n);
      return true;
    case 2:
      select_as<Bits16>(cond, a, b, out, n);
      return true;
    case 4:
      select_as<Bits32>(cond, a, b, out, n);
      return true;
    case 8:
      select_as<Bits64>(cond, a, b, out, n);
      return true;
    default:
      return false;
  }
}

SPMD_MASK_OPS_CLONES
bool convert_from_bool(DType to, Input a, std::byte* out, int64_t n) {
  if (to == DType::kBool || is_half_dtype(to)) return false;
  visit_compute_type(to, [&](auto zero) { from_bool<decltype(zero)>(a, out, n); });
  return true;
}

SPMD_MASK_OPS_CLONES
bool ieee_max_min(bool maximum, DType dtype, Input a, Input b, std::byte* out, int64_t n) {
#ifdef SPMD_MASK_OPS_AVX2
  if (avx2_runs() && dtype == DType::kFloat32) {
    (maximum ? &max_min_avx2_as<float, true, Avx2Float>
             : &max_min_avx2_as<float, false, Avx2Float>)(a, b, out, n);
    return true;
  }
  if (avx2_runs() && dtype == DType::kFloat64) {
    (maximum ? &max_min_avx2_as<double, true, Avx2Double>
             : &max_min_avx2_as<double, false, Avx2Double>)(a, b, out, n);
    return true;
  }
#endif
  return ieee_max_min_portable(maximum, dtype, a, b, out, n);
}

SPMD_MASK_OPS_CLONES
bool ieee_max_min_portable(bool maximum, DType dtype, Input a, Input b, std::byte* out, int64_t n) {
  if (dtype == DType::kFloat32) {
    maximum ? max_min_as<float, true>(a, b, out, n) : max_min_as<float, false>(a, b, out, n);
    return true;
  }
  if (dtype == DType::kFloat64) {
    maximum ? max_min_as<double, true>(a, b, out, n) : max_min_as<double, false>(a, b, out, n);
    return true;
  }
  return false;
}

SPMD_MASK_OPS_CLONES
void float16_max_min(bool maximum, Input a, Input b, std::byte* out, int64_t n) {
  maximum ? half_max_min_as<Float16Bits, true, false>(a, b, out, n)
          : half_max_min_as<Float16Bits, false, false>(a, b, out, n);
}

SPMD_MASK_OPS_CLONES
void float16_negate_or_abs(bool negate, Input a, std::byte* out, int64_t n) {
  auto* target = reinterpret_cast<uint16_t*>(out);
  with_reader<uint16_t>(a, n, [&](auto x) {
    if (negate) {
#pragma GCC ivdep
      for (int64_t i = 0; i < n; ++i) target[i] = static_cast<uint16_t>(x[i] ^ 0x8000u);
    } else {
#pragma GCC ivdep
      for (int64_t i = 0; i < n; ++i) target[i] = static_cast<uint16_t>(x[i] & 0x7fffu);
    }
  });
}

SPMD_MASK_OPS_CLONES
void bfloat16_max_min(bool maximum, Input a, Input b, std::byte* out, int64_t n) {
  if (subnormals_read_as_zero()) {
    return maximum ? half_max_min_as<BFloat16Bits, true, true>(a, b, out, n)
                   : half_max_min_as<BFloat16Bits, false, true>(a, b, out, n);
  }
  maximum ? half_max_min_as<BFloat16Bits, true, false>(a, b, out, n)
          : half_max_min_as<BFloat16Bits, false, false>(a, b, out, n);
}

}  // namespace spmd::kernels
#undef SPMD_MASK_OPS_CLONES
#undef SPMD_MASK_OPS_AVX2
