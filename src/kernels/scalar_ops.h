// The element-wise operations of elementwise.h one element at a time, written once for the host
// and the GPU (`__host__ __device__` under nvcc, plain functions under g++).
//
// The CUDA backend's fused chain kernel (cuda/chain.cu) runs these on the device; the CPU tests
// (tests/kernels/scalar_ops_test.cc) run the same source on the host against the CPU backend's
// kernels, so the arithmetic the GPU does is tested on every commit without a GPU. Their values
// are the CPU kernels' (elementwise.h): JAX's rules for NaN, signed zeros, integer powers,
// saturating conversions and the half types (computed in float32, rounded after each step).
// The transcendentals (exp, log, tanh, pow) come from the platform's library — glibc here,
// CUDA's libdevice on the GPU — and differ from the CPU backend's Eigen in the last places, as
// JAX's GPU and CPU results do.
//
// A value is a Slot in its dtype's compute class: bool, int64 (every integer dtype but uint64,
// which the GPU does not compute in yet), float (float32 and the half types) or double.
// Integer arithmetic wraps in 64 bits and is truncated to the dtype when stored, which for
// add, sub, mul, neg and pow is the dtype's own wrapping. Pure functions; thread-safe.
#pragma once

#include <cmath>
#include <cstdint>

#include "kernels/elementwise.h"
#include "kernels/xla_special.h"
#include "spmd/dtype.h"

#if defined(__CUDACC__)
#define SPMD_HOST_DEVICE __host__ __device__
#else
#define SPMD_HOST_DEVICE
#endif
#if defined(__CUDA_ARCH__)  // nvcc's device pass
#define SPMD_UNROLL _Pragma("unroll")
#else
#define SPMD_UNROLL
#endif

namespace spmd::kernels::scalar {

enum class Class : uint8_t { kBool, kInt, kFloat, kDouble };

union Slot {
  bool b;
  int64_t i;
  float f;
  double d;
};

SPMD_HOST_DEVICE constexpr bool is_half(DType t) {
  return t == DType::kFloat16 || t == DType::kBFloat16;
}

SPMD_HOST_DEVICE constexpr Class class_of(DType t) {
  switch (t) {
    case DType::kBool:
      return Class::kBool;
    case DType::kFloat16:
    case DType::kBFloat16:
    case DType::kFloat32:
      return Class::kFloat;
    case DType::kFloat64:
      return Class::kDouble;
    default:
      return Class::kInt;
  }
}

// Whether this header computes in `t`: every dtype but uint64.
SPMD_HOST_DEVICE constexpr bool computes_in(DType t) { return t != DType::kUInt64; }

SPMD_HOST_DEVICE inline Slot make_bool(bool v) {
  Slot s{};
  s.b = v;
  return s;
}
SPMD_HOST_DEVICE inline Slot make_int(int64_t v) {
  Slot s{};
  s.i = v;
  return s;
}
SPMD_HOST_DEVICE inline Slot make_float(float v) {
  Slot s{};
  s.f = v;
  return s;
}
SPMD_HOST_DEVICE inline Slot make_double(double v) {
  Slot s{};
  s.d = v;
  return s;
}

// Element `index` of an array of T at `base`. Buffers hold whole elements, aligned as T: a typed
// access is one load or store of the element's width (memcpy through bytes is, under nvcc, one
// load per byte).
template <class T>
SPMD_HOST_DEVICE inline T read_as(const void* base, int64_t index) {
  return static_cast<const T*>(base)[index];
}
template <class T>
SPMD_HOST_DEVICE inline void write_as(void* base, int64_t index, T v) {
  static_cast<T*>(base)[index] = v;
}

// Element `index` of a buffer of `t`, in t's compute class.
SPMD_HOST_DEVICE inline Slot load(DType t, const void* base, int64_t index) {
  switch (t) {
    case DType::kBool:
      return make_bool(read_as<uint8_t>(base, index) != 0);
    case DType::kInt8:
      return make_int(read_as<int8_t>(base, index));
    case DType::kInt16:
      return make_int(read_as<int16_t>(base, index));
    case DType::kInt32:
      return make_int(read_as<int32_t>(base, index));
    case DType::kInt64:
    case DType::kUInt64:
      return make_int(read_as<int64_t>(base, index));
    case DType::kUInt8:
      return make_int(read_as<uint8_t>(base, index));
    case DType::kUInt16:
      return make_int(read_as<uint16_t>(base, index));
    case DType::kUInt32:
      return make_int(read_as<uint32_t>(base, index));
    case DType::kFloat16:
      return make_float(to_float(float16{read_as<uint16_t>(base, index)}));
    case DType::kBFloat16:
      return make_float(to_float(bfloat16{read_as<uint16_t>(base, index)}));
    case DType::kFloat32:
      return make_float(read_as<float>(base, index));
    case DType::kFloat64:
      return make_double(read_as<double>(base, index));
  }
  return make_int(0);
}

// Stores `v` (in t's compute class) as element `index` of a buffer of `t`: integers truncate
// to the dtype's width (wrapping), half types round to nearest even.
SPMD_HOST_DEVICE inline void store(DType t, void* base, int64_t index, Slot v) {
  switch (t) {
    case DType::kBool:
      write_as<uint8_t>(base, index, v.b ? 1 : 0);
      return;
    case DType::kInt8:
    case DType::kUInt8:
      write_as<uint8_t>(base, index, static_cast<uint8_t>(v.i));
      return;
    case DType::kInt16:
    case DType::kUInt16:
      write_as<uint16_t>(base, index, static_cast<uint16_t>(v.i));
      return;
    case DType::kInt32:
    case DType::kUInt32:
      write_as<uint32_t>(base, index, static_cast<uint32_t>(v.i));
      return;
    case DType::kInt64:
    case DType::kUInt64:
      write_as<int64_t>(base, index, v.i);
      return;
    case DType::kFloat16:
      write_as<uint16_t>(base, index, to_float16(v.f).bits);
      return;
    case DType::kBFloat16:
      write_as<uint16_t>(base, index, to_bfloat16(v.f).bits);
      return;
    case DType::kFloat32:
      write_as<float>(base, index, v.f);
      return;
    case DType::kFloat64:
      write_as<double>(base, index, v.d);
      return;
  }
}

// `v` as a value of `t` reads back after a store and a load: a half type's float rounded to it,
// an integer wrapped to its width. What a step's kernel writes is what the next step reads.
SPMD_HOST_DEVICE inline Slot round_to(DType t, Slot v) {
  alignas(8) unsigned char bytes[8];
  store(t, bytes, 0, v);
  return load(t, bytes, 0);
}

// --- Unary ---------------------------------------------------------------------------------

template <class F>
SPMD_HOST_DEVICE constexpr F smallest_normal() {
  return sizeof(F) == 4 ? F(1.17549435e-38f) : F(2.2250738585072014e-308);
}

template <class F>
SPMD_HOST_DEVICE inline F unary_float(Unary op, F x) {
  switch (op) {
    case Unary::kNeg:
      return -x;
    case Unary::kExp:
      return std::exp(x);
    case Unary::kLog:  // a subnormal is 0 here, as in XLA: log(1e-45) = -inf
      return std::log(std::fabs(x) < smallest_normal<F>() ? x * F(0) : x);
    case Unary::kTanh:
      return std::tanh(x);
    case Unary::kSqrt:
      return std::sqrt(x);
    case Unary::kRsqrt:
      return F(1) / std::sqrt(x);
    case Unary::kAbs:
      return std::fabs(x);
    case Unary::kLogistic:
      return F(1) / (std::exp(-x) + F(1));
    case Unary::kRelu:  // NaN kept; -0 and subnormals to +0
      return x > F(0) ? x : (x != x ? x : F(0));
    case Unary::kSign:  // ±1, or the zero's own sign; NaN kept
      return x > F(0) ? F(1) : (x < F(0) ? F(-1) : x * F(0));
    case Unary::kFloor:
      return std::floor(x);
    case Unary::kCeil:
      return std::ceil(x);
    case Unary::kRound:  // half away from zero
      return std::round(x);
    case Unary::kRoundEven:  // half to even, the default rounding mode
      return std::rint(x);
    case Unary::kSin:
      return std::sin(x);
    case Unary::kCos:
      return std::cos(x);
    case Unary::kLog1p:  // a float32 subnormal is a zero of its sign, as in XLA
      return std::log1p(sizeof(F) == 4 && std::fabs(x) < smallest_normal<F>() ? x * F(0) : x);
    case Unary::kExpm1:
      return std::expm1(x);
    case Unary::kErf:
      return std::erf(x);
    case Unary::kErfc:
      return std::erfc(x);
    case Unary::kTan:
      return std::tan(x);
    case Unary::kCbrt:
      return std::cbrt(x);
    case Unary::kLgamma:
      return special::lgamma<F, special::StdMath>(x);
    case Unary::kDigamma:
      return special::digamma<F, special::StdMath>(x);
    case Unary::kErfInv:
      return special::erf_inv<special::StdMath>(x);
    default:  // kCopy, kStopGradient
      return x;
  }
}

SPMD_HOST_DEVICE inline int64_t unary_int(Unary op, int64_t x) {
  switch (op) {
    case Unary::kNeg:
      return static_cast<int64_t>(uint64_t{0} - static_cast<uint64_t>(x));
    case Unary::kAbs:
      return x < 0 ? static_cast<int64_t>(uint64_t{0} - static_cast<uint64_t>(x)) : x;
    case Unary::kSign:
      return (x > 0) - (x < 0);
    case Unary::kRelu:
      return x > 0 ? x : 0;
    case Unary::kNot:  // bitwise; the step's rounding keeps the type's width
      return ~x;
    default:  // kCopy, kStopGradient
      return x;
  }
}

// XLA's logistic on a half type: exp(-x), its sum with 1 and the quotient each rounded.
SPMD_HOST_DEVICE inline float logistic_half(DType t, float x) {
  const float e = round_to(t, make_float(std::exp(-x))).f;
  const float d = round_to(t, make_float(e + 1.0f)).f;
  return 1.0f / d;
}

// XLA's expm1 on a float16 (elementwise.cc's expm1_float16): its formula with every step
// rounded to float16.
SPMD_HOST_DEVICE inline float expm1_float16(float x) {
  const DType t = DType::kFloat16;
  const float half = round_to(t, make_float(x * 0.5f)).f;
  const float e = round_to(t, make_float(std::exp(x))).f;
  const float th = round_to(t, make_float(std::tanh(half))).f;
  const float minus = round_to(t, make_float(e - 1.0f)).f;
  const float plus = round_to(t, make_float(e + 1.0f)).f;
  return half == 0.0f ? x : std::fabs(x) > 0.5f ? minus : th * plus;
}

// op applied to `x`, a value of `t`; the result is of `t` too. Only for defined(op, t).
SPMD_HOST_DEVICE inline Slot unary(Unary op, DType t, Slot x) {
  switch (class_of(t)) {
    case Class::kBool:
      return make_bool(op == Unary::kNot ? !x.b : x.b);
    case Class::kInt:
      return make_int(unary_int(op, x.i));
    case Class::kFloat:
      if (op == Unary::kLogistic && is_half(t)) return make_float(logistic_half(t, x.f));
      if (op == Unary::kExpm1 && t == DType::kFloat16) return make_float(expm1_float16(x.f));
      return make_float(unary_float<float>(op, x.f));
    case Class::kDouble:
      return make_double(unary_float<double>(op, x.d));
  }
  return x;
}

// Whether elementwise.h's unary() computes op on t (it throws InvalidArgument otherwise).
SPMD_HOST_DEVICE constexpr bool defined(Unary op, DType t) {
  if (op == Unary::kCopy || op == Unary::kStopGradient) return true;
  switch (class_of(t)) {
    case Class::kBool:
      return op == Unary::kNot || op == Unary::kAbs;
    case Class::kInt:
      return op == Unary::kNeg || op == Unary::kAbs || op == Unary::kSign || op == Unary::kRelu ||
             op == Unary::kNot;
    default:
      return op != Unary::kNot;
  }
}

// --- Binary --------------------------------------------------------------------------------

// IEEE 754-2019's maximum and minimum, as jnp.maximum's: NaN wins, and -0 < +0.
template <class F>
SPMD_HOST_DEVICE inline F max_min(bool max, F x, F y) {
  if (x != x) return x;
  if (y != y) return y;
  if (x == F(0) && y == F(0)) return max ? x + y : -(-x - y);
  return max ? (x > y ? x : y) : (x < y ? x : y);
}

template <class F>
SPMD_HOST_DEVICE inline F binary_float(Binary op, F x, F y) {
  switch (op) {
    case Binary::kAdd:
      return x + y;
    case Binary::kSub:
      return x - y;
    case Binary::kMul:
      return x * y;
    case Binary::kDiv:
      return x / y;
    case Binary::kPow:
      return std::pow(x, y);
    case Binary::kMax:
      return max_min(true, x, y);
    case Binary::kRem:
      return std::fmod(x, y);
    case Binary::kAtan2:
      return std::atan2(x, y);
    default:  // kMin
      return max_min(false, x, y);
  }
}

// Power by squaring; a negative exponent gives 0 (1 for a base of 1, ±1 for -1), as XLA's.
SPMD_HOST_DEVICE inline int64_t integer_pow(int64_t base, int64_t exponent) {
  if (exponent < 0) return base == 1 ? 1 : base == -1 ? (exponent % 2 ? -1 : 1) : 0;
  uint64_t result = 1, b = static_cast<uint64_t>(base);
  while (exponent > 0) {
    if (exponent & 1) result *= b;
    b *= b;
    exponent >>= 1;
  }
  return static_cast<int64_t>(result);
}

// The width in bits of an integer dtype.
SPMD_HOST_DEVICE constexpr uint64_t bits_of(DType t) {
  switch (t) {
    case DType::kInt8:
    case DType::kUInt8:
      return 8;
    case DType::kInt16:
    case DType::kUInt16:
      return 16;
    case DType::kInt32:
    case DType::kUInt32:
      return 32;
    default:
      return 64;
  }
}

// x << y or x >> y on integers of `t` (elementwise.h's shifts): an amount outside [0, bits)
// shifts every bit out. x is t's value widened, so >> is arithmetic for a signed t and logical
// for an unsigned one (whose values are never negative here).
SPMD_HOST_DEVICE inline int64_t shift(Binary op, DType t, int64_t x, int64_t y) {
  const uint64_t amount = static_cast<uint64_t>(y);
  if (op == Binary::kShiftLeft) {
    return amount >= bits_of(t) ? 0 : static_cast<int64_t>(static_cast<uint64_t>(x) << amount);
  }
  if (amount >= bits_of(t)) return x < 0 ? -1 : 0;
  return x >> amount;
}

// Integer arithmetic on values of `t`, wrapping. Division truncates toward zero; a zero divisor
// gives 0 and sets *divided_by_zero (elementwise.h's binary() throws instead, before writing
// anything).
SPMD_HOST_DEVICE inline int64_t binary_int(Binary op, DType t, int64_t x, int64_t y,
                                           bool* divided_by_zero) {
  const uint64_t ux = static_cast<uint64_t>(x), uy = static_cast<uint64_t>(y);
  switch (op) {
    case Binary::kAdd:
      return static_cast<int64_t>(ux + uy);
    case Binary::kSub:
      return static_cast<int64_t>(ux - uy);
    case Binary::kMul:
      return static_cast<int64_t>(ux * uy);
    case Binary::kDiv:
      if (y == 0) {
        *divided_by_zero = true;
        return 0;
      }
      if (y == -1) return static_cast<int64_t>(uint64_t{0} - ux);  // INT64_MIN / -1 wraps
      return x / y;
    case Binary::kRem:
      if (y == 0) {
        *divided_by_zero = true;
        return 0;
      }
      return y == -1 ? 0 : x % y;  // INT64_MIN % -1 traps
    case Binary::kAnd:
      return x & y;
    case Binary::kOr:
      return x | y;
    case Binary::kXor:
      return x ^ y;
    case Binary::kShiftLeft:
    case Binary::kShiftRight:
      return shift(op, t, x, y);
    case Binary::kPow:
      return integer_pow(x, y);
    case Binary::kMax:
      return x > y ? x : y;
    default:  // kMin
      return x < y ? x : y;
  }
}

template <class T>
SPMD_HOST_DEVICE inline bool compare(Binary op, T x, T y) {
  switch (op) {
    case Binary::kEq:
      return x == y;
    case Binary::kNe:
      return x != y;
    case Binary::kLt:
      return x < y;
    case Binary::kLe:
      return x <= y;
    case Binary::kGt:
      return x > y;
    default:  // kGe
      return x >= y;
  }
}

// x op y for values of `t`: of `t`, or bool for a comparison. Only for defined(op, t).
SPMD_HOST_DEVICE inline Slot binary(Binary op, DType t, Slot x, Slot y, bool* divided_by_zero) {
  const bool comparison = is_comparison(op);
  switch (class_of(t)) {
    case Class::kBool:
      if (comparison) return make_bool(compare(op, x.b, y.b));
      // NumPy on bools: + and max are "or", * and min are "and".
      if (op == Binary::kXor) return make_bool(x.b != y.b);
      return make_bool(op == Binary::kAdd || op == Binary::kMax || op == Binary::kOr
                           ? (x.b || y.b)
                           : (x.b && y.b));
    case Class::kInt:
      if (comparison) return make_bool(compare(op, x.i, y.i));
      return make_int(binary_int(op, t, x.i, y.i, divided_by_zero));
    case Class::kFloat:
      if (comparison) return make_bool(compare(op, x.f, y.f));
      return make_float(binary_float(op, x.f, y.f));
    case Class::kDouble:
      if (comparison) return make_bool(compare(op, x.d, y.d));
      return make_double(binary_float(op, x.d, y.d));
  }
  return x;
}

// Whether elementwise.h's binary() computes op on t.
SPMD_HOST_DEVICE constexpr bool defined(Binary op, DType t) {
  if (is_comparison(op)) return true;
  switch (class_of(t)) {
    case Class::kBool:
      return op == Binary::kAdd || op == Binary::kMax || op == Binary::kOr || op == Binary::kMul ||
             op == Binary::kMin || op == Binary::kAnd || op == Binary::kXor;
    case Class::kInt:
      return op != Binary::kAtan2;
    default:
      return op != Binary::kAnd && op != Binary::kOr && op != Binary::kXor &&
             op != Binary::kShiftLeft && op != Binary::kShiftRight;
  }
}

// --- Convert -------------------------------------------------------------------------------

// The largest and smallest values of an integer dtype other than uint64.
SPMD_HOST_DEVICE constexpr int64_t int_max(DType t) {
  switch (t) {
    case DType::kInt8:
      return 127;
    case DType::kInt16:
      return 32767;
    case DType::kInt32:
      return 2147483647;
    case DType::kUInt8:
      return 255;
    case DType::kUInt16:
      return 65535;
    case DType::kUInt32:
      return 4294967295;
    default:
      return INT64_MAX;
  }
}
SPMD_HOST_DEVICE constexpr int64_t int_min(DType t) {
  switch (t) {
    case DType::kInt8:
      return -128;
    case DType::kInt16:
      return -32768;
    case DType::kInt32:
      return -2147483647 - 1;
    case DType::kInt64:
      return INT64_MIN;
    default:
      return 0;
  }
}

// A floating-point value as integer dtype `to`, saturating as XLA's conversion: NaN is 0,
// values beyond the range its extremes, the rest truncated toward zero.
SPMD_HOST_DEVICE inline int64_t saturate(double v, DType to) {
  if (v != v) return 0;
  // 2^digits, the first value above the range, exactly representable in double.
  const double above = to == DType::kInt64 ? 9223372036854775808.0 : double(int_max(to)) + 1.0;
  if (v >= above) return int_max(to);
  if (v <= double(int_min(to))) return int_min(to);
  return static_cast<int64_t>(v);
}

// `x`, a value of `from`, converted to `to` (elementwise.h's convert()).
SPMD_HOST_DEVICE inline Slot convert(DType from, DType to, Slot x) {
  const Class source = class_of(from);
  if (to == DType::kBool) {
    switch (source) {
      case Class::kBool:
        return x;
      case Class::kInt:
        return make_bool(x.i != 0);
      case Class::kFloat:
        return make_bool(x.f != 0.0f);
      case Class::kDouble:
        return make_bool(x.d != 0.0);
    }
  }
  const int64_t whole = source == Class::kBool ? int64_t{x.b} : x.i;
  switch (class_of(to)) {
    case Class::kInt:
      if (source == Class::kFloat) return make_int(saturate(x.f, to));
      if (source == Class::kDouble) return make_int(saturate(x.d, to));
      return round_to(to, make_int(whole));
    case Class::kFloat:
      if (source == Class::kFloat) return round_to(to, x);
      if (source == Class::kDouble) return round_to(to, make_float(static_cast<float>(x.d)));
      if (from == DType::kUInt64) {
        return round_to(to, make_float(static_cast<float>(static_cast<uint64_t>(whole))));
      }
      return round_to(to, make_float(static_cast<float>(whole)));
    default:  // kDouble
      if (source == Class::kFloat) return make_double(x.f);
      if (source == Class::kDouble) return x;
      if (from == DType::kUInt64)
        return make_double(static_cast<double>(static_cast<uint64_t>(whole)));
      return make_double(static_cast<double>(whole));
  }
}

}  // namespace spmd::kernels::scalar
