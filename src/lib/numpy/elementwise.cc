// spmd::numpy's element-wise operations, comparisons, where and astype: Tensor's broadcasting
// and promotion rules (tensor_arithmetic.h) under NumPy's names, then one element-wise, select or
// convert primitive (lax.h).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <optional>

#include "jit/lax.h"
#include "jit/promotion.h"
#include "jit/tensor_arithmetic.h"
#include "jit/trace.h"
#include "spmd/config.h"
#include "spmd/error.h"
#include "spmd/numpy.h"

namespace spmd::numpy {

namespace lax = compiler::lax;
using compiler::arithmetic;
using compiler::floating_of;
using compiler::promote;
using kernels::Binary;
using kernels::Unary;

DType promote_types(DType a, DType b) { return promote(a, b); }

Tensor add(const Tensor& a, const Tensor& b) { return a + b; }
Tensor subtract(const Tensor& a, const Tensor& b) { return a - b; }
Tensor multiply(const Tensor& a, const Tensor& b) { return a * b; }
Tensor divide(const Tensor& a, const Tensor& b) { return a / b; }

namespace {

// JAX's power is numeric: a bool operand counts as the integer 0 or 1, of the other operand's
// dtype, or of the default integer beside another bool (jnp.power(True, True) is int32).
Tensor numeric(const Tensor& t, DType other) {
  if (t.dtype() != DType::kBool) return t;
  return astype(t, other == DType::kBool ? config::default_int_dtype() : other);
}

}  // namespace

Tensor power(const Tensor& a, const Tensor& b) {
  return arithmetic("power", Binary::kPow, numeric(a, b.dtype()), numeric(b, a.dtype()));
}
namespace {

// lax.integer_pow: a ** n by squaring and multiplying, in JAX's order (so the values are its
// bits), 1 / a ** -n for a negative n; its derivative follows from the products.
Tensor integer_pow(const Tensor& a, int64_t n) {
  if (n < 0 && !is_floating(a.dtype())) {
    throw DTypeError(fmt::format(
        "power: integers cannot be raised to negative powers, got {} ** {} (use a floating "
        "base, as JAX's integer_pow does)",
        compiler::type_text(a.dtype(), a.shape()), n));
  }
  if (n == 0) return lax::full_like(a, 1);
  Tensor x = a;
  std::optional<Tensor> acc;
  for (uint64_t m = n < 0 ? -static_cast<uint64_t>(n) : static_cast<uint64_t>(n); m > 0;) {
    if (m & 1) acc = acc ? *acc * x : x;
    m >>= 1;
    if (m > 0) x = x * x;
  }
  return n < 0 ? lax::full_like(*acc, 1) / *acc : *acc;
}

}  // namespace

Tensor power(const Tensor& a, Scalar b) {
  const Tensor base = numeric(a, DType::kBool);
  if (!b.floating && !b.boolean) return integer_pow(base, b.integer);
  return arithmetic("power", Binary::kPow, base, b, false);
}
Tensor power(Scalar a, const Tensor& b) {
  return arithmetic("power", Binary::kPow, numeric(b, DType::kBool), a, true);
}
Tensor maximum(const Tensor& a, const Tensor& b) {
  return arithmetic("maximum", Binary::kMax, a, b);
}
Tensor minimum(const Tensor& a, const Tensor& b) {
  return arithmetic("minimum", Binary::kMin, a, b);
}
Tensor maximum(const Tensor& a, Scalar b) {
  return arithmetic("maximum", Binary::kMax, a, b, false);
}
Tensor minimum(const Tensor& a, Scalar b) {
  return arithmetic("minimum", Binary::kMin, a, b, false);
}

Tensor negative(const Tensor& a) { return -a; }
Tensor exp(const Tensor& a) {
  return compiler::unary("exp", Unary::kExp, a, floating_of(a.dtype()));
}
Tensor log(const Tensor& a) {
  return compiler::unary("log", Unary::kLog, a, floating_of(a.dtype()));
}
Tensor tanh(const Tensor& a) {
  return compiler::unary("tanh", Unary::kTanh, a, floating_of(a.dtype()));
}
Tensor sqrt(const Tensor& a) {
  return compiler::unary("sqrt", Unary::kSqrt, a, floating_of(a.dtype()));
}
Tensor rsqrt(const Tensor& a) {
  return compiler::unary("rsqrt", Unary::kRsqrt, a, floating_of(a.dtype()));
}
Tensor logistic(const Tensor& a) {
  return compiler::unary("logistic", Unary::kLogistic, a, floating_of(a.dtype()));
}
Tensor sin(const Tensor& a) {
  return compiler::unary("sin", Unary::kSin, a, floating_of(a.dtype()));
}
Tensor cos(const Tensor& a) {
  return compiler::unary("cos", Unary::kCos, a, floating_of(a.dtype()));
}
Tensor tan(const Tensor& a) {
  return compiler::unary("tan", Unary::kTan, a, floating_of(a.dtype()));
}
Tensor cbrt(const Tensor& a) {
  return compiler::unary("cbrt", Unary::kCbrt, a, floating_of(a.dtype()));
}
Tensor log1p(const Tensor& a) {
  return compiler::unary("log1p", Unary::kLog1p, a, floating_of(a.dtype()));
}
Tensor expm1(const Tensor& a) {
  return compiler::unary("expm1", Unary::kExpm1, a, floating_of(a.dtype()));
}
Tensor erf(const Tensor& a) {
  return compiler::unary("erf", Unary::kErf, a, floating_of(a.dtype()));
}
Tensor erfc(const Tensor& a) {
  return compiler::unary("erfc", Unary::kErfc, a, floating_of(a.dtype()));
}
namespace {

// jax.lax's special functions take floating operands only (jnp's would convert an integer).
Tensor special_function(const char* name, Unary fn, const Tensor& a) {
  if (!is_floating(a.dtype())) {
    throw InvalidArgument(
        fmt::format("{} does not accept dtype {}. Accepted dtypes are subtypes of floating.", name,
                    dtype_name(a.dtype())));
  }
  return compiler::unary(name, fn, a, a.dtype());
}

}  // namespace

Tensor lgamma(const Tensor& a) { return special_function("lgamma", Unary::kLgamma, a); }
Tensor digamma(const Tensor& a) { return special_function("digamma", Unary::kDigamma, a); }
Tensor erf_inv(const Tensor& a) { return special_function("erf_inv", Unary::kErfInv, a); }
Tensor abs(const Tensor& a) { return compiler::unary("abs", Unary::kAbs, a, a.dtype()); }
Tensor sign(const Tensor& a) {
  compiler::refuse_bool("sign", a);
  return compiler::unary("sign", Unary::kSign, a, a.dtype());
}
Tensor relu(const Tensor& a) {
  // maximum(a, 0)'s values (NaN kept, -0 to +0) in one op, whose derivative is jax.nn.relu's:
  // 1 where a > 0, else 0 (at 0 too, where maximum's would split the tie). A bool is the
  // integer 0 or 1, as in JAX (relu(True) is int32 1).
  const Tensor x = numeric(a, DType::kBool);
  return compiler::unary("relu", Unary::kRelu, x, x.dtype());
}

Tensor equal(const Tensor& a, const Tensor& b) { return arithmetic("equal", Binary::kEq, a, b); }
Tensor not_equal(const Tensor& a, const Tensor& b) {
  return arithmetic("not_equal", Binary::kNe, a, b);
}
Tensor less(const Tensor& a, const Tensor& b) { return a < b; }
Tensor less_equal(const Tensor& a, const Tensor& b) { return a <= b; }
Tensor greater(const Tensor& a, const Tensor& b) { return a > b; }
Tensor greater_equal(const Tensor& a, const Tensor& b) { return a >= b; }
Tensor equal(const Tensor& a, Scalar b) { return arithmetic("equal", Binary::kEq, a, b, false); }
Tensor not_equal(const Tensor& a, Scalar b) {
  return arithmetic("not_equal", Binary::kNe, a, b, false);
}
Tensor less(const Tensor& a, Scalar b) { return arithmetic("less", Binary::kLt, a, b, false); }
Tensor less_equal(const Tensor& a, Scalar b) {
  return arithmetic("less_equal", Binary::kLe, a, b, false);
}
Tensor greater(const Tensor& a, Scalar b) {
  return arithmetic("greater", Binary::kGt, a, b, false);
}
Tensor greater_equal(const Tensor& a, Scalar b) {
  return arithmetic("greater_equal", Binary::kGe, a, b, false);
}

Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  compiler::trace_of("where", {&cond, &a, &b});
  const DType dtype = promote(a.dtype(), b.dtype());
  const Shape shape = compiler::broadcast_shapes(
      "where", cond.shape(), compiler::broadcast_shapes("where", a.shape(), b.shape()));
  const Tensor operands[] = {lax::convert_element_type(cond, DType::kBool),
                             lax::convert_element_type(a, dtype),
                             lax::convert_element_type(b, dtype)};
  const auto broadcast = compiler::broadcast_arrays("where", operands, shape);
  return lax::select(broadcast[0], broadcast[1], broadcast[2]);
}

Tensor where(const Tensor& cond, const Tensor& a, Scalar b) {
  auto trace = compiler::trace_of("where", {&cond, &a});
  compiler::check_scalar_range("where", b, a.dtype());
  return where(cond, a,
               compiler::scalar_tensor(trace, b, compiler::promote_with_scalar(a.dtype(), b)));
}
Tensor where(const Tensor& cond, Scalar a, const Tensor& b) {
  auto trace = compiler::trace_of("where", {&cond, &b});
  compiler::check_scalar_range("where", a, b.dtype());
  return where(cond, compiler::scalar_tensor(trace, a, compiler::promote_with_scalar(b.dtype(), a)),
               b);
}

Tensor astype(const Tensor& a, DType dtype) {
  compiler::trace_of("astype", {&a});
  return lax::convert_element_type(a, dtype);
}

}  // namespace spmd::numpy

namespace spmd::lax {

Tensor bitcast_convert_type(const Tensor& a, DType dtype) {
  compiler::trace_of("bitcast_convert_type", {&a});
  return compiler::lax::bitcast_convert_type(a, dtype);
}

}  // namespace spmd::lax
