// spmd::numpy's floor division and remainders (floor_divide, remainder, fmod, divmod), built
// from lax's div, rem, sign, select and round as jax.numpy builds them, so that the values, the
// signs of zeros, inf and NaN included, are JAX's.
#include <utility>

#include "jit/lax.h"
#include "jit/tensor_arithmetic.h"
#include "spmd/numpy.h"

namespace spmd::numpy {

namespace lax = compiler::lax;
using compiler::promoted;
using kernels::Binary;
using kernels::Unary;

namespace {

using Operands = std::pair<Tensor, Tensor>;

bool is_integer(DType t) { return !is_floating(t) && t != DType::kBool; }
bool is_unsigned(DType t) {
  return t == DType::kUInt8 || t == DType::kUInt16 || t == DType::kUInt32 || t == DType::kUInt64;
}

Tensor zero_like(const Tensor& t) { return lax::full_like(t, 0); }

Tensor stop(const Tensor& t) { return lax::unary(Unary::kStopGradient, t); }

// jax.numpy's _float_divmod (after CPython's float_divmod): the quotient rounded to an integer,
// and the remainder of the divisor's sign. The quotient is piecewise constant, so it is built
// from stopped operands: its derivative is 0, as JAX's (where round's is a symbolic zero), and
// no cotangent flows back through the division (0 / 0 would make it NaN).
Operands float_divmod(const Tensor& x, const Tensor& y) {
  Tensor mod = lax::binary(Binary::kRem, x, y);
  const Tensor xq = stop(x), yq = stop(y), modq = stop(mod);
  const Tensor exact = lax::select(lax::binary(Binary::kEq, yq, zero_like(yq)), xq,
                                   lax::binary(Binary::kSub, xq, modq));
  Tensor div = lax::binary(Binary::kDiv, exact, yq);
  const Tensor mod_nonzero = lax::binary(Binary::kNe, modq, zero_like(modq));
  const Tensor signs_differ =
      lax::binary(Binary::kNe, lax::unary(Unary::kSign, yq), lax::unary(Unary::kSign, modq));
  const Tensor adjust = lax::binary(Binary::kAnd, mod_nonzero, signs_differ);
  mod = lax::select(adjust, lax::binary(Binary::kAdd, mod, y), mod);
  div = lax::select(adjust, lax::binary(Binary::kSub, div, lax::full_like(div, 1)), div);
  return {lax::unary(Unary::kRound, div), mod};
}

Tensor floor_divide_of(const Operands& operands) {
  const auto& [x, y] = operands;
  if (is_floating(x.dtype())) return float_divmod(x, y).first;
  Tensor quotient = lax::binary(Binary::kDiv, x, y);
  if (is_unsigned(x.dtype())) return quotient;
  const Tensor signs_differ =
      lax::binary(Binary::kNe, lax::unary(Unary::kSign, x), lax::unary(Unary::kSign, y));
  const Tensor remainder = lax::binary(Binary::kRem, x, y);
  const Tensor inexact = lax::binary(Binary::kNe, remainder, zero_like(remainder));
  return lax::select(lax::binary(Binary::kAnd, signs_differ, inexact),
                     lax::binary(Binary::kSub, quotient, lax::full_like(quotient, 1)), quotient);
}

// An integer divisor with 1 in place of 0, as jnp.remainder and jnp.fmod take it.
Tensor nonzero_divisor(const Tensor& y) {
  if (!is_integer(y.dtype())) return y;
  return lax::select(lax::binary(Binary::kEq, y, zero_like(y)), lax::full_like(y, 1), y);
}

Tensor remainder_of(const Operands& operands) {
  const Tensor& x = operands.first;
  const Tensor y = nonzero_divisor(operands.second);
  const Tensor truncated = lax::binary(Binary::kRem, x, y);
  const Tensor zero = zero_like(truncated);
  const Tensor signs_differ = lax::binary(Binary::kNe, lax::binary(Binary::kLt, truncated, zero),
                                          lax::binary(Binary::kLt, y, zero_like(y)));
  const Tensor plus =
      lax::binary(Binary::kAnd, signs_differ, lax::binary(Binary::kNe, truncated, zero));
  return lax::select(plus, lax::binary(Binary::kAdd, truncated, y), truncated);
}

}  // namespace

Tensor floor_divide(const Tensor& a, const Tensor& b) {
  return floor_divide_of(promoted("floor_divide", a, b, true));
}
Tensor floor_divide(const Tensor& a, Scalar b) {
  return floor_divide_of(promoted("floor_divide", a, b, false, true));
}
Tensor floor_divide(Scalar a, const Tensor& b) {
  return floor_divide_of(promoted("floor_divide", b, a, true, true));
}

Tensor remainder(const Tensor& a, const Tensor& b) {
  return remainder_of(promoted("remainder", a, b, true));
}
Tensor remainder(const Tensor& a, Scalar b) {
  return remainder_of(promoted("remainder", a, b, false, true));
}
Tensor remainder(Scalar a, const Tensor& b) {
  return remainder_of(promoted("remainder", b, a, true, true));
}

namespace {

Tensor fmod_of(const Operands& operands) {
  return lax::binary(Binary::kRem, operands.first, nonzero_divisor(operands.second));
}

// fmod of a bool pair, as JAX reaches it: x % 0 is x (XLA's rem), JAX replacing a zero divisor
// only where the operands' own type is an integer.
Tensor fmod_of_bools(const Operands& operands) {
  const auto& [x, y] = operands;
  return lax::select(lax::binary(Binary::kEq, y, zero_like(y)), x, fmod_of(operands));
}

}  // namespace

Tensor fmod(const Tensor& a, const Tensor& b) {
  const Operands operands = promoted("fmod", a, b, true);
  const bool bools = a.dtype() == DType::kBool && b.dtype() == DType::kBool;
  return bools ? fmod_of_bools(operands) : fmod_of(operands);
}
Tensor fmod(const Tensor& a, Scalar b) { return fmod_of(promoted("fmod", a, b, false, true)); }
Tensor fmod(Scalar a, const Tensor& b) { return fmod_of(promoted("fmod", b, a, true, true)); }

std::pair<Tensor, Tensor> divmod(const Tensor& a, const Tensor& b) {
  const Operands operands = promoted("divmod", a, b, true);
  if (is_floating(operands.first.dtype())) return float_divmod(operands.first, operands.second);
  return {floor_divide_of(operands), remainder_of(operands)};
}

}  // namespace spmd::numpy
