// spmd::numpy's bitwise and logical operations and shifts: lax's and, or, xor, not and shifts
// on integers (bitwise) and bools (logical), with jax.numpy's promotion; a floating operand is a
// DTypeError naming the function, as JAX's TypeError.
#include <fmt/format.h>

#include <string_view>
#include <utility>

#include "jit/lax.h"
#include "jit/program.h"
#include "jit/tensor_arithmetic.h"
#include "jit/trace.h"
#include "spmd/error.h"
#include "spmd/numpy.h"

namespace spmd::numpy {

namespace lax = compiler::lax;
using compiler::promoted;
using kernels::Binary;
using kernels::Unary;

namespace {

using Operands = std::pair<Tensor, Tensor>;

// DTypeError unless `t` is an integer (or, where `bool_too`, a bool) tensor.
void check_integer(std::string_view what, const Tensor& t, bool bool_too) {
  if (!is_floating(t.dtype()) && (bool_too || t.dtype() != DType::kBool)) return;
  throw DTypeError(fmt::format("{} is defined on {} operands, got {}", what,
                               bool_too ? "integer and bool" : "integer",
                               compiler::type_text(t.dtype(), t.shape())));
}

// a code b on integer or bool operands of one dtype (`numeric`: a bool pair as integers).
Tensor bitwise(std::string_view what, Binary code, const Operands& operands, bool numeric) {
  check_integer(what, operands.first, !numeric);
  return lax::binary(code, operands.first, operands.second);
}

Tensor truth(const Tensor& t) { return lax::convert_element_type(t, DType::kBool); }

Tensor logical(std::string_view what, Binary code, const Tensor& a, const Tensor& b) {
  const auto [x, y] = promoted(what, a, b, false);
  return lax::binary(code, truth(x), truth(y));
}

}  // namespace

Tensor bitwise_and(const Tensor& a, const Tensor& b) {
  return bitwise("bitwise_and", Binary::kAnd, promoted("bitwise_and", a, b, false), false);
}
Tensor bitwise_and(const Tensor& a, Scalar b) {
  return bitwise("bitwise_and", Binary::kAnd, promoted("bitwise_and", a, b, false, false), false);
}
Tensor bitwise_or(const Tensor& a, const Tensor& b) {
  return bitwise("bitwise_or", Binary::kOr, promoted("bitwise_or", a, b, false), false);
}
Tensor bitwise_or(const Tensor& a, Scalar b) {
  return bitwise("bitwise_or", Binary::kOr, promoted("bitwise_or", a, b, false, false), false);
}
Tensor bitwise_xor(const Tensor& a, const Tensor& b) {
  return bitwise("bitwise_xor", Binary::kXor, promoted("bitwise_xor", a, b, false), false);
}
Tensor bitwise_xor(const Tensor& a, Scalar b) {
  return bitwise("bitwise_xor", Binary::kXor, promoted("bitwise_xor", a, b, false, false), false);
}
Tensor invert(const Tensor& a) {
  compiler::trace_of("invert", {&a});
  check_integer("invert", a, true);
  return lax::unary(Unary::kNot, a);
}

Tensor left_shift(const Tensor& a, const Tensor& b) {
  return bitwise("left_shift", Binary::kShiftLeft, promoted("left_shift", a, b, true), true);
}
Tensor left_shift(const Tensor& a, Scalar b) {
  return bitwise("left_shift", Binary::kShiftLeft, promoted("left_shift", a, b, false, true), true);
}
Tensor left_shift(Scalar a, const Tensor& b) {
  return bitwise("left_shift", Binary::kShiftLeft, promoted("left_shift", b, a, true, true), true);
}
Tensor right_shift(const Tensor& a, const Tensor& b) {
  return bitwise("right_shift", Binary::kShiftRight, promoted("right_shift", a, b, true), true);
}
Tensor right_shift(const Tensor& a, Scalar b) {
  return bitwise("right_shift", Binary::kShiftRight, promoted("right_shift", a, b, false, true),
                 true);
}
Tensor right_shift(Scalar a, const Tensor& b) {
  return bitwise("right_shift", Binary::kShiftRight, promoted("right_shift", b, a, true, true),
                 true);
}

Tensor logical_and(const Tensor& a, const Tensor& b) {
  return logical("logical_and", Binary::kAnd, a, b);
}
Tensor logical_or(const Tensor& a, const Tensor& b) {
  return logical("logical_or", Binary::kOr, a, b);
}
Tensor logical_xor(const Tensor& a, const Tensor& b) {
  return logical("logical_xor", Binary::kXor, a, b);
}
Tensor logical_not(const Tensor& a) {
  compiler::trace_of("logical_not", {&a});
  return lax::unary(Unary::kNot, truth(a));
}

}  // namespace spmd::numpy
