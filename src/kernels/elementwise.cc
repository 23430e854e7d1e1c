#include "kernels/elementwise.h"

#include <fmt/format.h>

#include <Eigen/Core>
#include <algorithm>
#include <array>
#include <cmath>
#include <iterator>
#include <limits>
#include <type_traits>
#include <vector>

#include "kernels/dispatch.h"
#include "kernels/float_arithmetic.h"
#include "kernels/half_convert.h"
#include "kernels/integer_arithmetic.h"
#include "kernels/mask_ops.h"
#include "kernels/saturating_convert.h"
#include "kernels/xla_exp_avx2.h"
#include "kernels/xla_exp_avx512.h"
#include "kernels/xla_log_avx2.h"
#include "kernels/xla_math.h"
#include "kernels/xla_special.h"
#include "spmd/error.h"

namespace spmd::kernels {
namespace {

template <class T>
using Vec = Eigen::Array<T, Eigen::Dynamic, 1>;
template <class T>
using ConstMap = Eigen::Map<const Vec<T>>;
template <class T>
using Map = Eigen::Map<Vec<T>>;

// Calls f with an Eigen expression of n elements: the buffer, or its one element repeated.
template <class T, class F>
void with_operand(const T* data, int64_t elements, int64_t n, F&& f) {
  if (elements == n) {
    f(ConstMap<T>(data, n));
  } else {
    f(Vec<T>::Constant(n, data[0]));
  }
}

// The half types compute in float32 (dispatch.h), a block at a time: each block's operands are
// widened into buffers on the stack, computed, and the result rounded back. One whole buffer of
// float32 per operand would be a fresh allocation of twice the array per call (first touches
// that cost more than the arithmetic: a bfloat16 maximum over 4096 × 2048 took 38 ms on the
// 2-core Zen 3, JAX's 2-9), and a chain's blocks would allocate one each time.
constexpr int64_t kWideBlock = 1024;
using WideBlock = std::array<float, kWideBlock>;

// Calls f(first, len) over blocks of at most kWideBlock elements covering [0, n), in order.
template <class F>
void by_blocks(int64_t n, F&& f) {
  for (int64_t first = 0; first < n; first += kWideBlock) f(first, std::min(kWideBlock, n - first));
}

// Elements [first, first + len) of an input of n `size`-byte elements, or its one element.
Input part_of(Input in, int64_t n, int64_t first, int64_t len, size_t size) {
  if (in.elements != n) return in;
  return {in.data + static_cast<size_t>(first) * size, len};
}

// A half-type input's block (its elements, or one) widened into `wide`, as an Input of float32.
Input widened(DType dtype, Input in, WideBlock& wide) {
  widen_half(dtype, in.data, wide.data(), in.elements);
  return {reinterpret_cast<const std::byte*>(wide.data()), in.elements};
}

// The float32 square root, correctly rounded as XLA's CPU code computes it. Eigen's on SSE and
// AVX is an approximate reciprocal square root and one Newton step (EIGEN_FAST_MATH), a unit in
// the last place off (sqrt(4) = 1.9999999) in the vector body and exact in the scalar tail. This
// loop compiles to the exact square-root instruction, vectorised (this file is built with
// -fno-math-errno, so std::sqrt need not set errno).
void sqrt_f32(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = std::sqrt(x[i]);
}

// The policy of xla_special.h with XLA's float32 log and log1p, under which its functions give
// JAX's float32 values; sine and cosine the C library's, as XLA's CPU code calls them.
struct XlaFloat32Math {
  XLA_MATH_INLINE static float log(float x) { return xla_log_of(x); }
  XLA_MATH_INLINE static float log1p(float x) { return xla_log1p_of(x); }
  XLA_MATH_INLINE static float sin(float x) { return std::sin(x); }
  XLA_MATH_INLINE static float cos(float x) { return std::cos(x); }
};

// lgamma and digamma of float32s in xla_special.h's three parts.
struct LgammaF32 {
  XLA_MATH_INLINE static float unreflected(float v) {
    return special::lgamma_unreflected<float, XlaFloat32Math>(
        special::lanczos_terms<float, XlaFloat32Math>(v));
  }
  XLA_MATH_INLINE static float angle(float v) { return special::lgamma_angle(v); }
  static void trigonometry(float angle, float& sine, float& /*cosine*/) { sine = std::sin(angle); }
  XLA_MATH_INLINE static float from(float v, float unreflected, float sine, float /*cosine*/) {
    return special::lgamma_from<float, XlaFloat32Math>(v, unreflected, sine);
  }
};
struct DigammaF32 {
  XLA_MATH_INLINE static float unreflected(float v) {
    return special::digamma_unreflected<float, XlaFloat32Math>(
        special::lanczos_terms<float, XlaFloat32Math>(v));
  }
  XLA_MATH_INLINE static float angle(float v) { return special::digamma_angle(v); }
  static void trigonometry(float angle, float& sine, float& cosine) {
    sine = std::sin(angle);
    cosine = std::cos(angle);
  }
  XLA_MATH_INLINE static float from(float v, float unreflected, float sine, float cosine) {
    return special::digamma_from(v, unreflected, sine, cosine);
  }
};

// Fn (LgammaF32 or DigammaF32) of n float32s, block by block: the unreflected formula and the
// reflection's angle in a vectorised loop, the C library's sine (and cosine) where x < 1/2, then
// the values in another vectorised loop. y may be x.
template <class Fn>
XLA_MATH_INLINE void lanczos_f32(const float* x, float* y, int64_t n) {
  constexpr int64_t kBlock = 256;
  float unreflected[kBlock], angle[kBlock], sine[kBlock], cosine[kBlock];
  for (int64_t first = 0; first < n; first += kBlock) {
    const int64_t len = std::min(kBlock, n - first);
    const float* in = x + first;
    for (int64_t i = 0; i < len; ++i) {
      unreflected[i] = Fn::unreflected(in[i]);
      angle[i] = Fn::angle(in[i]);
    }
    for (int64_t i = 0; i < len; ++i) {
      sine[i] = 1.0f;
      cosine[i] = 0.0f;
      if (in[i] < 0.5f) Fn::trigonometry(angle[i], sine[i], cosine[i]);
    }
    for (int64_t i = 0; i < len; ++i) {
      y[first + i] = Fn::from(in[i], unreflected[i], sine[i], cosine[i]);
    }
  }
}

// The float32 exp, log, log1p, tanh, logistic, expm1, erf and erfc as XLA's CPU code computes them
// (xla_math.h), so that jnp's values are JAX's bit for bit; built for x86-64-v4 (AVX-512), where
// the loop vectorises 16 wide, x86-64-v3 (AVX2, FMA), 8 wide, and the baseline, where std::fma
// is the C library's exact emulation (same values, slower), picked at load time. Returns false
// for another operation.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default"), flatten))
#endif
bool xla_unary_f32(Unary op, const float* x, float* y, int64_t n) {
  const auto each = [&](auto f) {
    for (int64_t i = 0; i < n; ++i) y[i] = f(x[i]);
    return true;
  };
  switch (op) {
    case Unary::kExp:
      return each([](float v) { return xla_exp(v); });
    case Unary::kLog:
      return each([](float v) { return xla_log_of(v); });
    case Unary::kLog1p:
      return each([](float v) { return xla_log1p_of(v); });
    case Unary::kTanh:
      return each([](float v) { return xla_tanh(v); });
    case Unary::kLogistic:
      return each([](float v) { return xla_logistic(v); });
    case Unary::kExpm1:
      return each([](float v) { return xla_expm1(v); });
    case Unary::kErf:
      return each([](float v) { return xla_erf(v); });
    case Unary::kErfc:
      return each([](float v) { return xla_erfc(v); });
    case Unary::kErfInv:
      for (int64_t i = 0; i < n; ++i) y[i] = special::erf_inv<XlaFloat32Math>(x[i]);
      return true;
    case Unary::kLgamma:
      lanczos_f32<LgammaF32>(x, y, n);
      return true;
    case Unary::kDigamma:
      lanczos_f32<DigammaF32>(x, y, n);
      return true;
    default:
      return false;
  }
}

// Whether the CPU runs xla_unary_f32's x86-64-v4 (AVX-512) clone.
bool avx512_clone_runs() {
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
  static const bool v4 = __builtin_cpu_supports("x86-64-v4") != 0;
  return v4;
#else
  return false;
#endif
}

template <class T>
void unary_typed(Unary op, const ConstMap<T>& x, Map<T> y) {
  if constexpr (std::is_same_v<T, float>) {
    if (op == Unary::kExp && (xla_exp_avx512(x.data(), y.data(), x.size()) ||
                              xla_exp_avx2(x.data(), y.data(), x.size()))) {
      return;
    }
    if (op == Unary::kLogistic && (xla_logistic_avx512(x.data(), y.data(), x.size()) ||
                                   xla_logistic_avx2(x.data(), y.data(), x.size()))) {
      return;
    }
    // Where xla_unary_f32's x86-64-v4 clone runs (16 wide), it is left to: the AVX2 loops were
    // written for machines without AVX-512 and have not been timed on one.
    if (!avx512_clone_runs()) {
      if (op == Unary::kLog && xla_log_avx2(x.data(), y.data(), x.size())) return;
      if (op == Unary::kLog1p && xla_log1p_avx2(x.data(), y.data(), x.size())) return;
    }
    if (xla_unary_f32(op, x.data(), y.data(), x.size())) return;
  }
  if (float_unary(op, dtype_of<T>(), Input{reinterpret_cast<const std::byte*>(x.data()), x.size()},
                  reinterpret_cast<std::byte*>(y.data()), x.size())) {
    return;
  }
  if (op == Unary::kCopy || op == Unary::kStopGradient) {
    y = x;
    return;
  }
  if constexpr (std::is_same_v<T, bool>) {
    if (op == Unary::kNot) {
      y = !x;
      return;
    }
    if (op == Unary::kAbs) {
      y = x;
      return;
    }
  } else if constexpr (std::is_floating_point_v<T>) {
    switch (op) {
      case Unary::kNeg:
        y = -x;
        return;
      case Unary::kExp:
        y = x.exp();
        return;
      case Unary::kLog:
        // A subnormal is 0 here as in XLA (log(1e-45) = -inf), also where a scalar tail's
        // std::log, reading bits rather than arithmetic, would see through denormals-are-zero.
        y = (x.abs() < std::numeric_limits<T>::min()).select(x * T(0), x).log();
        return;
      case Unary::kTanh:
        y = x.tanh();
        return;
      case Unary::kSqrt:
        if constexpr (std::is_same_v<T, float>) {
          sqrt_f32(x.data(), y.data(), x.size());
        } else {
          y = x.sqrt();
        }
        return;
      case Unary::kRsqrt:
        if constexpr (std::is_same_v<T, float>) {
          sqrt_f32(x.data(), y.data(), x.size());
          y = T(1) / y;
        } else {
          y = x.rsqrt();
        }
        return;
      case Unary::kAbs:
        y = x.abs();
        return;
      case Unary::kLogistic:
        y = T(1) / ((-x).exp() + T(1));
        return;
      case Unary::kRelu:  // x > 0 is false for NaN (kept) and for -0 and subnormals (to +0)
        y = (x > T(0)).select(x, (x != x).select(x, T(0)));
        return;
      case Unary::kSign:
        // XLA's sign: ±1, or the zero's own sign (a subnormal counts as zero), NaN kept.
        // x * 0 gives the signed zero and keeps NaN.
        y = (x > T(0)).select(T(1), (x < T(0)).select(T(-1), x * T(0)));
        return;
      // std's roundings, element by element: Eigen's vectorised floor, ceil and rint, as this
      // build compiles them, give +0 for -0 (scalar_ops_test found it); XLA keeps the sign.
      case Unary::kFloor:
        y = x.unaryExpr([](T v) { return std::floor(v); });
        return;
      case Unary::kCeil:
        y = x.unaryExpr([](T v) { return std::ceil(v); });
        return;
      case Unary::kRound:
        y = x.unaryExpr([](T v) { return std::round(v); });
        return;
      case Unary::kRoundEven:  // the default rounding mode, which spmd never changes
        y = x.unaryExpr([](T v) { return std::rint(v); });
        return;
      // The C library's, as XLA's CPU code calls them (Eigen's vectorised sin and cos reduce
      // large arguments less exactly).
      case Unary::kSin:
        y = x.unaryExpr([](T v) { return std::sin(v); });
        return;
      case Unary::kCos:
        y = x.unaryExpr([](T v) { return std::cos(v); });
        return;
      case Unary::kLog1p:
        y = x.unaryExpr([](T v) { return std::log1p(v); });
        return;
      case Unary::kExpm1:
        y = x.unaryExpr([](T v) { return std::expm1(v); });
        return;
      case Unary::kErf:
        y = x.unaryExpr([](T v) { return std::erf(v); });
        return;
      case Unary::kErfc:
        y = x.unaryExpr([](T v) { return std::erfc(v); });
        return;
      case Unary::kTan:
        y = x.unaryExpr([](T v) { return std::tan(v); });
        return;
      case Unary::kCbrt:
        y = x.unaryExpr([](T v) { return std::cbrt(v); });
        return;
      // float64 (float32 went to xla_unary_f32): JAX's decompositions with the C library's log.
      case Unary::kLgamma:
        y = x.unaryExpr([](T v) { return special::lgamma<T, special::StdMath>(v); });
        return;
      case Unary::kDigamma:
        y = x.unaryExpr([](T v) { return special::digamma<T, special::StdMath>(v); });
        return;
      case Unary::kErfInv:
        y = x.unaryExpr([](T v) { return special::erf_inv<special::StdMath>(v); });
        return;
      default:
        break;
    }
  } else {
    switch (op) {
      case Unary::kNeg:
        y = T(0) - x;
        return;  // wraps for unsigned, as NumPy's
      case Unary::kAbs:
        if constexpr (std::is_signed_v<T>) {
          y = x.abs();
        } else {
          y = x;
        }
        return;
      case Unary::kSign:
        y = (x > T(0)).template cast<T>() - (x < T(0)).template cast<T>();
        return;
      case Unary::kRelu:
        y = x.max(T(0));
        return;
      case Unary::kNot:
        y = x.unaryExpr([](T v) { return static_cast<T>(~v); });
        return;
      default:
        break;
    }
  }
  throw InvalidArgument(
      fmt::format("kernels::unary: {} is not defined on {}", name(op), dtype_name(dtype_of<T>())));
}

// Integer power by squaring; a negative exponent gives 0 (1 for a base of 1, ±1 for -1), as
// XLA's integer pow does.
template <class T>
T integer_pow(T base, T exponent) {
  if constexpr (std::is_signed_v<T>) {
    if (exponent < 0) return base == 1 ? 1 : base == -1 ? (exponent % 2 ? -1 : 1) : 0;
  }
  T result = 1;
  while (exponent > 0) {
    if (exponent & 1) result = static_cast<T>(result * base);
    base = static_cast<T>(base * base);
    exponent = static_cast<T>(exponent >> 1);
  }
  return result;
}

// x << amount and x >> amount as XLA shifts: an amount outside [0, bits) (a negative one
// included) shifts every bit out. >> is arithmetic for a signed T, logical for an unsigned one.
template <class T>
T shift_left(T x, T amount) {
  using U = std::make_unsigned_t<T>;
  if (static_cast<U>(amount) >= sizeof(T) * 8) return T{0};
  return static_cast<T>(static_cast<U>(x) << static_cast<U>(amount));
}
template <class T>
T shift_right(T x, T amount) {
  using U = std::make_unsigned_t<T>;
  if (static_cast<U>(amount) >= sizeof(T) * 8) return x < T{0} ? T(-1) : T{0};
  return static_cast<T>(x >> static_cast<U>(amount));
}

// The bitwise operations and shifts on an integer T; false for another op.
template <class T, class X, class Y>
bool bitwise(Binary op, const X& x, const Y& y, Map<T> out) {
  switch (op) {
    case Binary::kAnd:
      out = x.binaryExpr(y, [](T a, T b) { return static_cast<T>(a & b); });
      return true;
    case Binary::kOr:
      out = x.binaryExpr(y, [](T a, T b) { return static_cast<T>(a | b); });
      return true;
    case Binary::kXor:
      out = x.binaryExpr(y, [](T a, T b) { return static_cast<T>(a ^ b); });
      return true;
    case Binary::kShiftLeft:
      out = x.binaryExpr(y, &shift_left<T>);
      return true;
    case Binary::kShiftRight:
      out = x.binaryExpr(y, &shift_right<T>);
      return true;
    default:
      return false;
  }
}

template <class T, class X, class Y>
void arithmetic(Binary op, const X& x, const Y& y, Map<T> out) {
  if constexpr (std::is_same_v<T, bool>) {
    // NumPy on bools: + and max are "or", * and min are "and".
    switch (op) {
      case Binary::kAdd:
      case Binary::kMax:
      case Binary::kOr:
        out = x || y;
        return;
      case Binary::kMul:
      case Binary::kMin:
      case Binary::kAnd:
        out = x && y;
        return;
      case Binary::kXor:
        out = x != y;
        return;
      default:
        break;
    }
  } else {
    switch (op) {
      // Floating-point types never reach the four operations nor the comparisons:
      // binary_of gives them to float_arithmetic.h, and their Eigen forms are not compiled.
      case Binary::kAdd:
        if constexpr (!std::is_floating_point_v<T>) {
          out = x + y;
          return;
        }
        break;
      case Binary::kSub:
        if constexpr (!std::is_floating_point_v<T>) {
          out = x - y;
          return;
        }
        break;
      case Binary::kMul:
        if constexpr (!std::is_floating_point_v<T>) {
          out = x * y;
          return;
        }
        break;
      case Binary::kMax:
      case Binary::kMin:
        // Floating-point types never reach here: binary_of gives them to ieee_max_min.
        if constexpr (!std::is_floating_point_v<T>) {
          out = op == Binary::kMax ? x.max(y).eval() : x.min(y).eval();
          return;
        }
        break;
      default:
        break;
    }
    if constexpr (std::is_floating_point_v<T>) {
      if (op == Binary::kPow) {
        out = x.pow(y);
        return;
      }
      if (op == Binary::kRem) {
        out = x.binaryExpr(y, [](T a, T b) { return std::fmod(a, b); });
        return;
      }
      if (op == Binary::kAtan2) {
        out = x.binaryExpr(y, [](T a, T b) { return std::atan2(a, b); });
        return;
      }
    } else {
      if (op == Binary::kPow) {
        out = x.binaryExpr(y, [](T b, T e) { return integer_pow(b, e); });
        return;
      }
      if (bitwise<T>(op, x, y, out)) return;
    }
  }
  throw InvalidArgument(
      fmt::format("kernels::binary: {} is not defined on {}", name(op), dtype_name(dtype_of<T>())));
}

// The six comparisons of an integer or bool T through Eigen.
template <class T, class X, class Y>
void comparison_of_integers(Binary op, const X& x, const Y& y, Map<bool> out) {
  switch (op) {
    case Binary::kEq:
      out = x == y;
      return;
    case Binary::kNe:
      out = x != y;
      return;
    case Binary::kLt:
      out = x < y;
      return;
    case Binary::kLe:
      out = x <= y;
      return;
    case Binary::kGt:
      out = x > y;
      return;
    case Binary::kGe:
      out = x >= y;
      return;
    default:
      break;
  }
}

template <class T, class X, class Y>
void comparison(Binary op, const X& x, const Y& y, Map<bool> out) {
  if constexpr (std::is_floating_point_v<T>) {
    // float_comparison (float_arithmetic.h) takes every comparison of these types.
    throw InvalidArgument(fmt::format("kernels::binary: {} of {} reached Eigen's comparison",
                                      name(op), dtype_name(dtype_of<T>())));
  } else {
    comparison_of_integers<T>(op, x, y, out);
  }
}

// a / b truncated toward zero; the lowest value over -1, whose quotient the type cannot hold
// (and whose division traps on x86: SIGFPE), wraps to itself, as XLA defines it.
template <class T>
T truncating_divide(T a, T b) {
  if constexpr (std::is_signed_v<T>) {
    using U = std::make_unsigned_t<T>;
    if (b == T(-1)) return static_cast<T>(static_cast<U>(U{0} - static_cast<U>(a)));
  }
  return static_cast<T>(a / b);
}

// a % b of truncating division (of a's sign); the lowest value % -1 is 0 (its division traps).
template <class T>
T truncating_remainder(T a, T b) {
  if constexpr (std::is_signed_v<T>) {
    if (b == T(-1)) return T{0};
  }
  return static_cast<T>(a % b);
}

// Truncating integer division or its remainder (op kDiv or kRem); a zero divisor anywhere throws
// before anything is written.
template <class T>
void integer_divide(Binary op, Input a, Input b, std::byte* out, int64_t n) {
  const ConstMap<T> divisor(reinterpret_cast<const T*>(b.data), b.elements);
  if ((divisor == T(0)).any()) {
    throw InvalidArgument(fmt::format("{}: integer division by zero", name(op)));
  }
  with_operand(reinterpret_cast<const T*>(a.data), a.elements, n, [&](const auto& x) {
    with_operand(reinterpret_cast<const T*>(b.data), b.elements, n, [&](const auto& y) {
      Map<T>(reinterpret_cast<T*>(out), n) =
          x.binaryExpr(y, op == Binary::kDiv ? &truncating_divide<T> : &truncating_remainder<T>);
    });
  });
}

// The kernels for one element type T (never a half type), and for the half types, which widen
// to float32, compute, and round once.

template <class T>
void unary_of(Unary op, DType /*dtype*/, Input a, std::byte* out, int64_t n) {
  const T* x = reinterpret_cast<const T*>(a.data);
  Vec<T> full;
  if (a.elements != n) {
    full = Vec<T>::Constant(n, x[0]);
    x = full.data();
  }
  unary_typed<T>(op, ConstMap<T>(x, n), Map<T>(reinterpret_cast<T*>(out), n));
}

// `v` rounded to the half type `dtype` and widened again, in place.
void round_to(DType dtype, std::vector<float>& v) {
  std::vector<std::byte> bits(v.size() * dtype_size(dtype));
  from_wide(dtype, v, bits.data());
  const std::vector<float> rounded = to_wide(dtype, bits.data(), static_cast<int64_t>(v.size()));
  std::copy(rounded.begin(), rounded.end(), v.begin());
}

// XLA expands logistic before a half type is widened: exp(-x), its sum with 1 and the quotient
// each round to `dtype` (exp(13.7) is already inf in float16, so its logistic is 0).
void logistic_half(DType dtype, Input a, std::byte* out, int64_t n) {
  std::vector<float> v = to_wide(dtype, a.data, a.elements);
  if (a.elements != n) v.assign(static_cast<size_t>(n), v.front());
  Map<float> m(v.data(), n);
  m = -m;
  xla_unary_f32(Unary::kExp, v.data(), v.data(), n);
  round_to(dtype, v);
  m = m + 1.0f;
  round_to(dtype, v);
  m = 1.0f / m;
  from_wide(dtype, v, out);
}

// XLA computes expm1 of a float16 in float16 (bfloat16 it widens first): its formula
// (xla_math.h's xla_expm1) with x / 2, exp(x), tanh(x / 2), exp(x) ± 1 and the product each
// rounded to float16. Over every float16, jax.jit(jnp.expm1) gives these values; the float32
// formula rounded once differs in 11,381 of the 65,536.
void expm1_float16(Input a, std::byte* out, int64_t n) {
  std::vector<float> x = to_wide(DType::kFloat16, a.data, a.elements);
  if (a.elements != n) x.assign(static_cast<size_t>(n), x.front());
  std::vector<float> half(x.size()), e(x.size()), t(x.size()), y(x.size());
  for (size_t i = 0; i < x.size(); ++i) half[i] = x[i] * 0.5f;
  round_to(DType::kFloat16, half);
  xla_unary_f32(Unary::kExp, x.data(), e.data(), n);
  round_to(DType::kFloat16, e);
  xla_unary_f32(Unary::kTanh, half.data(), t.data(), n);
  round_to(DType::kFloat16, t);
  std::vector<float> plus(x.size()), minus(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    plus[i] = e[i] + 1.0f;
    minus[i] = e[i] - 1.0f;
  }
  round_to(DType::kFloat16, plus);
  round_to(DType::kFloat16, minus);
  for (size_t i = 0; i < x.size(); ++i) {
    const float small = t[i] * plus[i];  // exact in float32: two 11-bit significands
    y[i] = half[i] == 0.0f ? x[i] : std::fabs(x[i]) > 0.5f ? minus[i] : small;
  }
  from_wide(DType::kFloat16, y, out);
}

void unary_half(Unary op, DType dtype, Input a, std::byte* out, int64_t n) {
  if (dtype == DType::kFloat16 && (op == Unary::kNeg || op == Unary::kAbs)) {
    float16_negate_or_abs(op == Unary::kNeg, a, out, n);  // on the bits, as JAX (mask_ops.h)
    return;
  }
  if (op == Unary::kLogistic) {
    logistic_half(dtype, a, out, n);
    return;
  }
  if (op == Unary::kExpm1 && dtype == DType::kFloat16) {
    expm1_float16(a, out, n);
    return;
  }
  WideBlock wide_in, wide_out;  // not initialised: written before they are read
  by_blocks(n, [&](int64_t first, int64_t len) {
    unary_of<float>(op, DType::kFloat32, widened(dtype, part_of(a, n, first, len, 2), wide_in),
                    reinterpret_cast<std::byte*>(wide_out.data()), len);
    narrow_half(dtype, wide_out.data(), out + first * 2, len);
  });
}

template <class T>
void binary_of(Binary op, DType /*dtype*/, Input a, Input b, std::byte* out, int64_t n) {
  if constexpr (std::is_floating_point_v<T>) {
    // IEEE 754-2019's maximum and minimum, as jnp.maximum's (mask_ops.h): NaN wins, where
    // Eigen's own max leaves it to the instruction, and -0 < +0 whichever side each is on.
    if ((op == Binary::kMax || op == Binary::kMin) &&
        ieee_max_min(op == Binary::kMax, dtype_of<T>(), a, b, out, n)) {
      return;
    }
    // The arithmetic and comparisons in the CPU's widest vectors (float_arithmetic.h).
    if (float_arithmetic(op, dtype_of<T>(), a, b, out, n) ||
        float_comparison(op, dtype_of<T>(), a, b, out, n)) {
      return;
    }
  }
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    if (op == Binary::kDiv || op == Binary::kRem) {
      integer_divide<T>(op, a, b, out, n);
      return;
    }
    // Sums, differences, products, extremes and comparisons in the CPU's widest vectors
    // (integer_arithmetic.h).
    if (integer_arithmetic(op, dtype_of<T>(), a, b, out, n) ||
        integer_comparison(op, dtype_of<T>(), a, b, out, n)) {
      return;
    }
  }
  with_operand(reinterpret_cast<const T*>(a.data), a.elements, n, [&](const auto& x) {
    with_operand(reinterpret_cast<const T*>(b.data), b.elements, n, [&](const auto& y) {
      if (is_comparison(op)) {
        comparison<T>(op, x, y, Map<bool>(reinterpret_cast<bool*>(out), n));
      } else {
        arithmetic<T>(op, x, y, Map<T>(reinterpret_cast<T*>(out), n));
      }
    });
  });
}

void binary_half(Binary op, DType dtype, Input a, Input b, std::byte* out, int64_t n) {
  if (op == Binary::kMax || op == Binary::kMin) {  // mask_ops.h: on the bits
    return (dtype == DType::kFloat16 ? float16_max_min : bfloat16_max_min)(op == Binary::kMax, a, b,
                                                                           out, n);
  }
  WideBlock wide_a, wide_b, wide_out;  // not initialised: written before they are read
  by_blocks(n, [&](int64_t first, int64_t len) {
    const Input x = widened(dtype, part_of(a, n, first, len, 2), wide_a);
    const Input y = widened(dtype, part_of(b, n, first, len, 2), wide_b);
    if (is_comparison(op)) {
      binary_of<float>(op, DType::kFloat32, x, y, out + first, len);
      return;
    }
    binary_of<float>(op, DType::kFloat32, x, y, reinterpret_cast<std::byte*>(wide_out.data()), len);
    narrow_half(dtype, wide_out.data(), out + first * 2, len);
  });
}

// Moves bits, whatever the dtype (mask_ops.h: Eigen's select is one branch per element).
void select_any(DType dtype, Input cond, Input a, Input b, std::byte* out, int64_t n) {
  if (!select_bits(dtype_size(dtype), cond, a, b, out, n)) {
    throw InvalidArgument(
        fmt::format("kernels::select: no select of {}-byte elements", dtype_size(dtype)));
  }
}

// A floating-point value as the integer type U, saturating as XLA's conversion does: NaN is 0,
// values beyond U's range (infinities included) are its extremes, the rest truncate toward zero.
template <class F, class U>
U saturating_cast(F v) {
  constexpr U kHalfWay = std::numeric_limits<U>::max() / 2 + 1;            // 2^(digits - 1), exact
  constexpr F kAbove = static_cast<F>(kHalfWay) * F(2);                    // 2^digits
  constexpr F kLowest = static_cast<F>(std::numeric_limits<U>::lowest());  // 0 or -2^digits
  if (v != v) return U{0};
  if (v >= kAbove) return std::numeric_limits<U>::max();
  if (v <= kLowest) return std::numeric_limits<U>::lowest();
  return static_cast<U>(v);
}

template <class F, class U>
void convert_of(DType /*from*/, DType /*to*/, Input a, std::byte* out, int64_t n) {
  if constexpr (std::is_same_v<F, bool> && !std::is_same_v<U, bool>) {
    if (convert_from_bool(dtype_of<U>(), a, out, n)) return;  // mask_ops.h: vectorised
  }
  with_operand(reinterpret_cast<const F*>(a.data), a.elements, n, [&](const auto& x) {
    if constexpr (std::is_same_v<U, bool>) {
      Map<bool>(reinterpret_cast<bool*>(out), n) = x != F(0);
    } else if constexpr (std::is_floating_point_v<F> && std::is_integral_v<U>) {
      if (a.elements == n && saturating_convert(dtype_of<F>(), dtype_of<U>(), a.data, out, n)) {
        return;  // vector lanes (saturating_convert.h)
      }
      Map<U>(reinterpret_cast<U*>(out), n) = x.unaryExpr(&saturating_cast<F, U>);
    } else {
      Map<U>(reinterpret_cast<U*>(out), n) = x.template cast<U>();
    }
  });
}

// Either side a half type: computed through float32, rounded once.
void convert_half(DType from, DType to, Input a, std::byte* out, int64_t n) {
  if (to == DType::kBool) {  // from the bits: a bfloat16 subnormal is a float32 one, flushed
    with_operand(reinterpret_cast<const uint16_t*>(a.data), a.elements, n, [&](const auto& x) {
      Map<bool>(reinterpret_cast<bool*>(out), n) =
          x.unaryExpr([](uint16_t bits) { return (bits & 0x7fff) != 0; });
    });
    return;
  }
  const bool half_in = is_half_dtype(from), half_out = is_half_dtype(to);
  // To or from float32 elementwise: the conversion alone, with no copy through a block (a
  // bfloat16 sum's convert, fused with it, spent as long copying each widened block as widening).
  if (a.elements == n && half_in && to == DType::kFloat32) {
    widen_half(from, a.data, reinterpret_cast<float*>(out), n);
    return;
  }
  if (a.elements == n && from == DType::kFloat32 && half_out) {
    narrow_half(to, reinterpret_cast<const float*>(a.data), out, n);
    return;
  }
  const size_t in_size = dtype_size(from), out_size = dtype_size(to);
  WideBlock wide_in, wide_out;  // not initialised: written before they are read
  by_blocks(n, [&](int64_t first, int64_t len) {
    const Input block = part_of(a, n, first, len, in_size);
    const Input x = half_in ? widened(from, block, wide_in) : block;
    std::byte* at = out + static_cast<size_t>(first) * out_size;
    std::byte* target = half_out ? reinterpret_cast<std::byte*>(wide_out.data()) : at;
    visit_compute_type(from, [&](auto zero_from) {
      visit_compute_type(to, [&](auto zero_to) {
        convert_of<decltype(zero_from), decltype(zero_to)>(from, to, x, target, len);
      });
    });
    if (half_out) narrow_half(to, wide_out.data(), at, len);
  });
}

}  // namespace

std::string_view name(Unary op) {
  constexpr std::string_view names[] = {"neg",
                                        "exp",
                                        "log",
                                        "tanh",
                                        "sqrt",
                                        "rsqrt",
                                        "abs",
                                        "sign",
                                        "not",
                                        "copy",
                                        "stop_gradient",
                                        "relu",
                                        "logistic",
                                        "floor",
                                        "ceil",
                                        "round",
                                        "round_nearest_even",
                                        "sin",
                                        "cos",
                                        "log1p",
                                        "expm1",
                                        "erf",
                                        "erfc",
                                        "tan",
                                        "cbrt",
                                        "lgamma",
                                        "digamma",
                                        "erf_inv"};
  static_assert(std::size(names) == static_cast<size_t>(kLastUnary) + 1);
  return names[static_cast<int>(op)];
}

std::string_view name(Binary op) {
  constexpr std::string_view names[] = {
      "add", "sub",        "mul",         "div",   "pow", "max", "min", "and", "or", "xor",
      "rem", "shift_left", "shift_right", "atan2", "eq",  "ne",  "lt",  "le",  "gt", "ge"};
  static_assert(std::size(names) == static_cast<size_t>(Binary::kGe) + 1);
  return names[static_cast<int>(op)];
}

UnaryKernel unary_kernel(DType dtype) {
  if (is_half_dtype(dtype)) return &unary_half;
  return visit_compute_type(dtype,
                            [](auto zero) -> UnaryKernel { return &unary_of<decltype(zero)>; });
}

BinaryKernel binary_kernel(DType dtype) {
  if (is_half_dtype(dtype)) return &binary_half;
  return visit_compute_type(dtype,
                            [](auto zero) -> BinaryKernel { return &binary_of<decltype(zero)>; });
}

SelectKernel select_kernel(DType /*dtype*/) { return &select_any; }

ConvertKernel convert_kernel(DType from, DType to) {
  if (is_half_dtype(from) || is_half_dtype(to)) return &convert_half;
  return visit_compute_type(from, [to](auto zero_from) -> ConvertKernel {
    return visit_compute_type(to, [](auto zero_to) -> ConvertKernel {
      return &convert_of<decltype(zero_from), decltype(zero_to)>;
    });
  });
}

void unary(Unary op, DType dtype, Input a, std::byte* out, int64_t n) {
  unary_kernel(dtype)(op, dtype, a, out, n);
}

void binary(Binary op, DType dtype, Input a, Input b, std::byte* out, int64_t n) {
  binary_kernel(dtype)(op, dtype, a, b, out, n);
}

void select(DType dtype, Input cond, Input a, Input b, std::byte* out, int64_t n) {
  select_kernel(dtype)(dtype, cond, a, b, out, n);
}

void convert(DType from, DType to, Input a, std::byte* out, int64_t n) {
  convert_kernel(from, to)(from, to, a, out, n);
}

}  // namespace spmd::kernels
