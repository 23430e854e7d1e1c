// spmd::numpy's hyperbolic functions and their inverses: each composed of exp, expm1, log,
// log1p and sqrt exactly as XLA expands JAX's sinh, cosh, asinh, acosh and atanh (the CHLO
// decompositions, read from JAX 0.10.2's optimised programs), so that its values are JAX's; and
// each with JAX's own derivative (lax::with_vjp) rather than its composition's.
#include <cmath>
#include <limits>
#include <optional>
#include <vector>

#include "jit/lax.h"
#include "jit/promotion.h"
#include "jit/trace.h"
#include "lib/numpy/internal.h"
#include "spmd/numpy.h"

namespace spmd::numpy {

Tensor internal::floating(const char* what, const Tensor& a) {
  compiler::trace_of(what, {&a});
  return compiler::lax::convert_element_type(a, compiler::floating_of(a.dtype()));
}

namespace {

namespace lax = compiler::lax;
using kernels::Binary;
using kernels::Unary;

Tensor un(Unary fn, const Tensor& x) { return lax::unary(fn, x); }
Tensor bin(Binary fn, const Tensor& a, const Tensor& b) { return lax::binary(fn, a, b); }
Tensor constant(const Tensor& x, double v) { return lax::full_like(x, v); }

// XLA's cosh: exp(x + log ½) + exp(log ½ - x).
Tensor cosh_value(const Tensor& x) {
  const Tensor half_log = constant(x, std::log(0.5));
  return un(Unary::kExp, x + half_log) + un(Unary::kExp, half_log - x);
}

// XLA's sinh: below 1 in magnitude, (e + e / (e + 1)) · ½ with e = expm1(x), which keeps the
// first-order term; else exp(x + log ½) - exp(log ½ - x).
Tensor sinh_value(const Tensor& x) {
  const Tensor one = constant(x, 1.0);
  const Tensor e = un(Unary::kExpm1, x);
  const Tensor small = (e + e / (e + one)) * constant(x, 0.5);
  const Tensor half_log = constant(x, std::log(0.5));
  const Tensor large = un(Unary::kExp, x + half_log) - un(Unary::kExp, half_log - x);
  return lax::select(bin(Binary::kLt, un(Unary::kAbs, x), one), small, large);
}

Tensor sinh_of(const Tensor& x);
Tensor cosh_of(const Tensor& x) {
  return lax::with_vjp("cosh", {x}, internal::in_float32(x, cosh_value),
                       [](const auto& in, const Tensor& g) {
                         return std::vector<std::optional<Tensor>>{g * sinh_of(in[0])};
                       });
}
Tensor sinh_of(const Tensor& x) {
  return lax::with_vjp("sinh", {x}, internal::in_float32(x, sinh_value),
                       [](const auto& in, const Tensor& g) {
                         return std::vector<std::optional<Tensor>>{g * cosh_of(in[0])};
                       });
}

}  // namespace

Tensor sinh(const Tensor& a) { return sinh_of(internal::floating("sinh", a)); }
Tensor cosh(const Tensor& a) { return cosh_of(internal::floating("cosh", a)); }

// XLA's asinh: sign(x) · (log|x| + log 2 from √max on, else log1p(|x| + x² / (√(x² + 1) + 1))).
// JAX's derivative: g · rsqrt(x² + 1).
Tensor arcsinh(const Tensor& a) {
  const Tensor x = internal::floating("arcsinh", a);
  const Tensor one = constant(x, 1.0);
  const Tensor ax = un(Unary::kAbs, x);
  const Tensor square = x * x;
  const Tensor large = un(Unary::kLog, ax) + constant(x, std::log(2.0));
  const Tensor small = un(Unary::kLog1p, ax + square / (un(Unary::kSqrt, square + one) + one));
  const Tensor huge =
      bin(Binary::kGe, ax, constant(x, std::sqrt(internal::largest_finite(x.dtype()))));
  const Tensor value = un(Unary::kSign, x) * lax::select(huge, large, small);
  return lax::with_vjp("asinh", {x}, value, [](const auto& in, const Tensor& g) {
    const Tensor& v = in[0];
    return std::vector<std::optional<Tensor>>{g * un(Unary::kRsqrt, v * v + constant(v, 1.0))};
  });
}

// XLA's acosh: log x + log 2 from max/2 on, else log1p(√(x - 1) · (√(x + 1) + √(x - 1))).
// JAX's derivative: g · rsqrt(x² - 1).
Tensor arccosh(const Tensor& a) {
  const Tensor x = internal::floating("arccosh", a);
  const Tensor below = un(Unary::kSqrt, x + constant(x, -1.0));
  const Tensor above = un(Unary::kSqrt, x + constant(x, 1.0));
  const Tensor small = un(Unary::kLog1p, below * (above + below));
  const Tensor large = un(Unary::kLog, x) + constant(x, std::log(2.0));
  const Tensor huge = bin(Binary::kGe, x, constant(x, internal::largest_finite(x.dtype()) / 2));
  const Tensor value = lax::select(huge, large, small);
  return lax::with_vjp("acosh", {x}, value, [](const auto& in, const Tensor& g) {
    const Tensor& v = in[0];
    return std::vector<std::optional<Tensor>>{g * un(Unary::kRsqrt, v * v - constant(v, 1.0))};
  });
}

// XLA's atanh: NaN beyond 1 in magnitude, else (log1p(x) - log1p(-x)) · ½. JAX's derivative:
// (1 / (1 + x)) · g / (1 - x).
Tensor arctanh(const Tensor& a) {
  const Tensor x = internal::floating("arctanh", a);
  const Tensor half_sum =
      (un(Unary::kLog1p, x) - un(Unary::kLog1p, un(Unary::kNeg, x))) * constant(x, 0.5);
  const Tensor outside = bin(Binary::kGt, un(Unary::kAbs, x), constant(x, 1.0));
  const Tensor value =
      lax::select(outside, constant(x, std::numeric_limits<double>::quiet_NaN()), half_sum);
  return lax::with_vjp("atanh", {x}, value, [](const auto& in, const Tensor& g) {
    const Tensor& v = in[0];
    const Tensor one = constant(v, 1.0);
    return std::vector<std::optional<Tensor>>{(one / (one + v)) * g / (one - v)};
  });
}

}  // namespace spmd::numpy
