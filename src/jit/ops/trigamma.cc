#include "jit/ops/trigamma.h"

#include <limits>
#include <numbers>

#include "jit/lax.h"
#include "kernels/elementwise.h"
#include "kernels/xla_special.h"

namespace spmd::compiler {
namespace {

using kernels::Binary;
using kernels::Unary;
namespace special = kernels::special;

// d/dz of digamma's unreflected formula at z (x - 1, or -x where reflected): with t = z + 7.5
// and Lanczos' sum a(z) = base + Σ c_k / (z + k), the formula log(t) + a'/a - 7/t has the
// derivative 1/t + (a'' a - a'^2) / a^2 + 7/t^2.
Tensor unreflected_derivative(const Tensor& z) {
  Tensor a = lax::full_like(z, special::kLanczosBase);
  Tensor a1 = lax::full_like(z, 0);  // a'
  Tensor a2 = lax::full_like(z, 0);  // a''
  for (int k = 0; k < 8; ++k) {
    const Tensor term = z + static_cast<double>(k + 1);
    const Tensor c_over = special::lanczos_coefficient(k) / term;
    a = a + c_over;
    a1 = a1 - c_over / term;
    a2 = a2 + (2.0 * c_over) / (term * term);
  }
  const Tensor t = z + (special::kLanczosG + 0.5);
  return (1.0 / t + (a2 * a - a1 * a1) / (a * a)) + special::kLanczosG / (t * t);
}

Tensor trigamma_in(const Tensor& x) {
  const Tensor reflect = x < 0.5;
  const Tensor z = lax::select(reflect, -x, x - 1.0);
  const Tensor d = unreflected_derivative(z);
  // digamma(x) = digamma(1 - x) - π cot(angle) below 1/2: ψ'(x) = -ψ'(1 - x) + π² / sin²(angle).
  const Tensor angle =
      (x + lax::unary(Unary::kAbs, lax::unary(Unary::kFloor, x + 0.5))) * std::numbers::pi;
  const Tensor sine = lax::unary(Unary::kSin, angle);
  const Tensor reflected = (std::numbers::pi * std::numbers::pi) / (sine * sine) - d;
  const Tensor value = lax::select(reflect, reflected, d);
  const Tensor pole = lax::binary(Binary::kAnd, x <= lax::full_like(x, 0),
                                  lax::binary(Binary::kEq, x, lax::unary(Unary::kFloor, x)));
  return lax::select(pole, lax::full_like(x, std::numeric_limits<double>::quiet_NaN()), value);
}

}  // namespace

Tensor trigamma(const Tensor& x) {
  if (x.dtype() == DType::kFloat16 || x.dtype() == DType::kBFloat16) {
    return lax::convert_element_type(trigamma_in(lax::convert_element_type(x, DType::kFloat32)),
                                     x.dtype());
  }
  return trigamma_in(x);
}

}  // namespace spmd::compiler
