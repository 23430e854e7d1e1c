#include "kernels/integer_arithmetic.h"

#include <algorithm>
#include <type_traits>

#include "kernels/dispatch.h"
#include "kernels/operand_reader.h"

namespace spmd::kernels {
namespace {

// The type T's wrapping arithmetic is computed in: unsigned, and at least 32 bits wide, so that
// the operands' promotion to int cannot overflow (uint16 × uint16 would, in int).
template <class T>
using WideInteger = std::conditional_t<(sizeof(T) < 4), uint32_t, std::make_unsigned_t<T>>;

template <class T, class R = T, class F>
void apply_to_integers(Input a, Input b, std::byte* out, int64_t n, F f) {
  auto* target = reinterpret_cast<R*>(out);
  with_reader<T>(a, n, [&](auto x) {
    with_reader<T>(b, n, [&](auto y) {
#pragma GCC ivdep
      for (int64_t i = 0; i < n; ++i) target[i] = f(x[i], y[i]);
    });
  });
}

template <class T>
bool integer_arithmetic_of(Binary op, Input a, Input b, std::byte* out, int64_t n) {
  using W = WideInteger<T>;
  switch (op) {
    case Binary::kAdd:
      apply_to_integers<T>(a, b, out, n, [](T x, T y) { return static_cast<T>(W(x) + W(y)); });
      return true;
    case Binary::kSub:
      apply_to_integers<T>(a, b, out, n, [](T x, T y) { return static_cast<T>(W(x) - W(y)); });
      return true;
    case Binary::kMul:
      apply_to_integers<T>(a, b, out, n, [](T x, T y) { return static_cast<T>(W(x) * W(y)); });
      return true;
    case Binary::kMax:
      apply_to_integers<T>(a, b, out, n, [](T x, T y) { return std::max(x, y); });
      return true;
    case Binary::kMin:
      apply_to_integers<T>(a, b, out, n, [](T x, T y) { return std::min(x, y); });
      return true;
    default:
      return false;
  }
}

template <class T>
bool integer_comparison_of(Binary op, Input a, Input b, std::byte* out, int64_t n) {
  switch (op) {
    case Binary::kEq:
      apply_to_integers<T, bool>(a, b, out, n, [](T x, T y) { return x == y; });
      return true;
    case Binary::kNe:
      apply_to_integers<T, bool>(a, b, out, n, [](T x, T y) { return x != y; });
      return true;
    case Binary::kLt:
      apply_to_integers<T, bool>(a, b, out, n, [](T x, T y) { return x < y; });
      return true;
    case Binary::kLe:
      apply_to_integers<T, bool>(a, b, out, n, [](T x, T y) { return x <= y; });
      return true;
    case Binary::kGt:
      apply_to_integers<T, bool>(a, b, out, n, [](T x, T y) { return x > y; });
      return true;
    case Binary::kGe:
      apply_to_integers<T, bool>(a, b, out, n, [](T x, T y) { return x >= y; });
      return true;
    default:
      return false;
  }
}

}  // namespace

// Built for x86-64-v3 (AVX2) and the baseline (SSE2), picked at load time, with the loops it
// calls inlined into each (direct calls only: mask_ops.cc says why). The helpers above are plain
// templates, not always_inline: marked so, GCC 12 left with_reader's loop out of line, built
// for the baseline (jnp.maximum over int8 took 0.82 ms, against 0.06 inlined).
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("arch=x86-64-v3", "default"), flatten))
#endif
bool integer_arithmetic(Binary op, DType dtype, Input a, Input b, std::byte* out, int64_t n) {
  return visit_integer(
      dtype, [&](auto zero) { return integer_arithmetic_of<decltype(zero)>(op, a, b, out, n); });
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("arch=x86-64-v3", "default"), flatten))
#endif
bool integer_comparison(Binary op, DType dtype, Input a, Input b, std::byte* out, int64_t n) {
  return visit_integer(
      dtype, [&](auto zero) { return integer_comparison_of<decltype(zero)>(op, a, b, out, n); });
}

}  // namespace spmd::kernels
