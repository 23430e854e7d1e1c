#include "kernels/mask_ops.h"

#include <Eigen/Core>
#include <algorithm>

#include "kernels/dispatch.h"
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

}  // namespace

// Each entry point is built for x86-64-v3 (AVX2: eight float32 lanes and a blend instruction)
// and the baseline (SSE2: four lanes, blends of three instructions), picked at load time, with
// the loops it calls inlined into each.
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
  if (dtype == DType::kFloat32) {
    (maximum ? &max_min_as<float, true> : &max_min_as<float, false>)(a, b, out, n);
    return true;
  }
  if (dtype == DType::kFloat64) {
    (maximum ? &max_min_as<double, true> : &max_min_as<double, false>)(a, b, out, n);
    return true;
  }
  return false;
}

}  // namespace spmd::kernels
#undef SPMD_MASK_OPS_CLONES
