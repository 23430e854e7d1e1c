#include "kernels/float_arithmetic.h"

#include <bit>
#include <cmath>
#include <cstdint>
#include <functional>
#include <type_traits>

#include "kernels/chain.h"
#include "kernels/operand_reader.h"

namespace spmd::kernels {
namespace {

// out[i] = f(a[i], b[i]) over n elements of F read as F, written as R. `ivdep`: out is an
// operand's buffer exactly or overlaps none (the header's contract), so the compiler need not
// guard the vector loop with an overlap test, which fails at equal addresses and would fall
// back to one element at a time.
template <class F, class R, class Op>
void apply(Input a, Input b, std::byte* out, int64_t n, Op f) {
  auto* target = reinterpret_cast<R*>(out);
  with_reader<F>(a, n, [&](auto x) {
    with_reader<F>(b, n, [&](auto y) {
#pragma GCC ivdep
      for (int64_t i = 0; i < n; ++i) target[i] = static_cast<R>(f(x[i], y[i]));
    });
  });
}

template <class F>
bool arithmetic_of(Binary op, Input a, Input b, std::byte* out, int64_t n) {
  switch (op) {
    case Binary::kAdd:
      apply<F, F>(a, b, out, n, std::plus<F>());
      return true;
    case Binary::kSub:
      apply<F, F>(a, b, out, n, std::minus<F>());
      return true;
    case Binary::kMul:
      apply<F, F>(a, b, out, n, std::multiplies<F>());
      return true;
    case Binary::kDiv:
      apply<F, F>(a, b, out, n, std::divides<F>());
      return true;
    default:
      return false;
  }
}

template <class F>
bool comparison_of(Binary op, Input a, Input b, std::byte* out, int64_t n) {
  switch (op) {
    case Binary::kEq:
      apply<F, bool>(a, b, out, n, std::equal_to<F>());
      return true;
    case Binary::kNe:
      apply<F, bool>(a, b, out, n, std::not_equal_to<F>());
      return true;
    case Binary::kLt:
      apply<F, bool>(a, b, out, n, std::less<F>());
      return true;
    case Binary::kLe:
      apply<F, bool>(a, b, out, n, std::less_equal<F>());
      return true;
    case Binary::kGt:
      apply<F, bool>(a, b, out, n, std::greater<F>());
      return true;
    case Binary::kGe:
      apply<F, bool>(a, b, out, n, std::greater_equal<F>());
      return true;
    default:
      return false;
  }
}

// out[i] = fma(a[i], b[i], c[i]) over n elements of F, the signs `form` flags flipped first (an
// exclusive or of the sign bit: exactly what negation does, NaN included).
template <class F>
void multiply_add_of(uint8_t form, Input a, Input b, Input c, std::byte* out, int64_t n) {
  using Bits = std::conditional_t<sizeof(F) == 4, uint32_t, uint64_t>;
  constexpr Bits kSign = Bits{1} << (sizeof(F) * 8 - 1);
  const Bits product = (form & kNegateProduct) != 0 ? kSign : 0;
  const Bits addend = (form & kNegateAddend) != 0 ? kSign : 0;
  const auto flip = [](F v, Bits sign) { return std::bit_cast<F>(std::bit_cast<Bits>(v) ^ sign); };
  auto* target = reinterpret_cast<F*>(out);
  with_reader<F>(a, n, [&](auto x) {
    with_reader<F>(b, n, [&](auto y) {
      with_reader<F>(c, n, [&](auto z) {
#pragma GCC ivdep
        for (int64_t i = 0; i < n; ++i)
          target[i] = std::fma(flip(x[i], product), y[i], flip(z[i], addend));
      });
    });
  });
}

// out[i] = f(a[i]) over n elements of F.
template <class F, class Op>
void apply(Input a, std::byte* out, int64_t n, Op f) {
  auto* target = reinterpret_cast<F*>(out);
  with_reader<F>(a, n, [&](auto x) {
#pragma GCC ivdep
    for (int64_t i = 0; i < n; ++i) target[i] = f(x[i]);
  });
}

template <class F>
bool unary_of(Unary op, Input a, std::byte* out, int64_t n) {
  switch (op) {
    case Unary::kNeg:
      apply<F>(a, out, n, std::negate<F>());
      return true;
    case Unary::kAbs:
      apply<F>(a, out, n, [](F x) { return std::fabs(x); });
      return true;
    case Unary::kRelu:
      // x > 0 is false for NaN (kept: x != x), for -0, and for a subnormal read as zero (+0).
      apply<F>(a, out, n, [](F x) { return x > F(0) ? x : x != x ? x : F(0); });
      return true;
    case Unary::kSign:
      // ±1, else x * 0: the zero's own sign (a subnormal read as zero counts as one), NaN kept.
      // Both values made for every element and one kept by a mask of bits: with x * 0 inside a
      // branch, or a select GCC turned back into one, it kept the branch (a product may trap),
      // one element at a time (2.2 ms over 1024 x 1024 float32, JAX 0.15).
      apply<F>(a, out, n, [](F x) {
        using U = std::conditional_t<sizeof(F) == 4, uint32_t, uint64_t>;
        const auto zero = std::bit_cast<U>(x * F(0));
        const auto one = std::bit_cast<U>(std::copysign(F(1), x));
        const U nonzero = U(0) - static_cast<U>((x > F(0)) | (x < F(0)));  // all ones, or none
        return std::bit_cast<F>((one & nonzero) | (zero & ~nonzero));
      });
      return true;
    // Exact roundings (the instruction's in the AVX2 build), -0 kept as XLA keeps it.
    case Unary::kFloor:
      apply<F>(a, out, n, [](F x) { return std::floor(x); });
      return true;
    case Unary::kCeil:
      apply<F>(a, out, n, [](F x) { return std::ceil(x); });
      return true;
    case Unary::kRoundEven:  // the default rounding mode, which spmd never changes
      apply<F>(a, out, n, [](F x) { return std::nearbyint(x); });
      return true;
    default:
      return false;
  }
}

}  // namespace

// Each entry point is built for x86-64-v3 (AVX2) and the baseline (SSE2), picked at load time,
// with the loops it calls inlined into each (as mask_ops.cc's).
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define SPMD_FLOAT_ARITHMETIC_CLONES \
  __attribute__((target_clones("arch=x86-64-v3", "default"), flatten))
#else
#define SPMD_FLOAT_ARITHMETIC_CLONES
#endif

SPMD_FLOAT_ARITHMETIC_CLONES
bool float_arithmetic(Binary op, DType dtype, Input a, Input b, std::byte* out, int64_t n) {
  if (dtype == DType::kFloat32) return arithmetic_of<float>(op, a, b, out, n);
  if (dtype == DType::kFloat64) return arithmetic_of<double>(op, a, b, out, n);
  return false;
}

SPMD_FLOAT_ARITHMETIC_CLONES
bool float_multiply_add(uint8_t form, DType dtype, Input a, Input b, Input c, std::byte* out,
                        int64_t n) {
  if (dtype == DType::kFloat32) {
    multiply_add_of<float>(form, a, b, c, out, n);
  } else if (dtype == DType::kFloat64) {
    multiply_add_of<double>(form, a, b, c, out, n);
  } else {
    return false;
  }
  return true;
}

bool cpu_has_fma() {
#if defined(__x86_64__) && defined(__GNUC__)
  static const bool has = __builtin_cpu_supports("fma");
  return has;
#elif defined(__aarch64__)
  return true;
#else
  return false;
#endif
}

SPMD_FLOAT_ARITHMETIC_CLONES
bool float_comparison(Binary op, DType dtype, Input a, Input b, std::byte* out, int64_t n) {
  if (dtype == DType::kFloat32) return comparison_of<float>(op, a, b, out, n);
  if (dtype == DType::kFloat64) return comparison_of<double>(op, a, b, out, n);
  return false;
}

SPMD_FLOAT_ARITHMETIC_CLONES
bool float_unary(Unary op, DType dtype, Input a, std::byte* out, int64_t n) {
  if (dtype == DType::kFloat32) return unary_of<float>(op, a, out, n);
  if (dtype == DType::kFloat64) return unary_of<double>(op, a, out, n);
  return false;
}

}  // namespace spmd::kernels
#undef SPMD_FLOAT_ARITHMETIC_CLONES
