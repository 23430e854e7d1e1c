// spmd::numpy's rounding: floor, ceil, trunc, rint and round, as jax.numpy computes them (an
// integer or bool operand is returned as it is, except by rint, which gives the default float).
#include <fmt/format.h>

#include <cmath>

#include "jit/lax.h"
#include "jit/program.h"
#include "jit/tensor_arithmetic.h"
#include "jit/trace.h"
#include "lib/numpy/internal.h"
#include "spmd/config.h"
#include "spmd/error.h"
#include "spmd/numpy.h"

namespace spmd::numpy {

namespace lax = compiler::lax;
using kernels::Binary;
using kernels::Unary;

namespace {

Tensor rounded(std::string_view what, Unary code, const Tensor& a) {
  compiler::trace_of(what, {&a});
  return is_floating(a.dtype()) ? lax::unary(code, a) : a;
}

}  // namespace

Tensor floor(const Tensor& a) { return rounded("floor", Unary::kFloor, a); }
Tensor ceil(const Tensor& a) { return rounded("ceil", Unary::kCeil, a); }

Tensor trunc(const Tensor& a) {
  compiler::trace_of("trunc", {&a});
  if (!is_floating(a.dtype())) return a;
  return lax::select(lax::binary(Binary::kLt, a, lax::full_like(a, 0)), lax::unary(Unary::kCeil, a),
                     lax::unary(Unary::kFloor, a));
}

Tensor rint(const Tensor& a) {
  compiler::trace_of("rint", {&a});
  if (!is_floating(a.dtype())) return astype(a, config::default_float_dtype());
  return lax::unary(Unary::kRoundEven, a);
}

Tensor round(const Tensor& a, int decimals) {
  compiler::trace_of("round", {&a});
  if (a.dtype() == DType::kBool) {  // (JAX fails inside NumPy's finfo)
    throw InvalidArgument(
        fmt::format("round: not defined on bool ({})", compiler::type_text(a.dtype(), a.shape())));
  }
  if (!is_floating(a.dtype())) {
    if (decimals < 0) {
      throw InvalidArgument(
          fmt::format("round: decimals={} on {}: integers round to decimals >= 0 only (as in JAX)",
                      decimals, compiler::type_text(a.dtype(), a.shape())));
    }
    return a;
  }
  if (decimals == 0) return lax::unary(Unary::kRoundEven, a);
  if (decimals > std::log10(internal::largest_finite(a.dtype())))
    return a;  // beyond the precision: as it is
  // JAX's rescaling (float16 through float32, as JAX converts it), then the division by the
  // factor as XLA simplifies it: a product with its reciprocal, rounded once to the dtype (for
  // bfloat16 a float32 reciprocal and product). round(1.7588102, 1) is 1.8000001 in float32.
  const Tensor x = a.dtype() == DType::kFloat16 ? lax::convert_element_type(a, DType::kFloat32) : a;
  const double scale = std::pow(10.0, decimals);
  Tensor scaled =
      lax::unary(Unary::kRoundEven, lax::binary(Binary::kMul, x, lax::full_like(x, scale)));
  if (scaled.dtype() == DType::kBFloat16)
    scaled = lax::convert_element_type(scaled, DType::kFloat32);
  const Tensor reciprocal =
      lax::binary(Binary::kDiv, lax::full_like(scaled, 1), lax::full_like(scaled, scale));
  const Tensor out = lax::binary(Binary::kMul, scaled, reciprocal);
  return lax::convert_element_type(out, a.dtype());
}

}  // namespace spmd::numpy
