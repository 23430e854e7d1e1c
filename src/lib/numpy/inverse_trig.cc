// spmd::numpy's inverse trigonometric functions: arctan2 is one primitive (the C library's
// atan2, which XLA's CPU backend calls), and arctan, arcsin and arccos are composed of it as XLA
// expands JAX's (read from JAX 0.10.2's optimised programs), each with JAX's own derivative
// (lax::with_vjp). In float16 and bfloat16, XLA rounds arcsin's and arccos's steps to the half
// type one by one (as spmd's kernels do) but computes arctan's in float32 (measured: the other
// way differs from JAX in a quarter of the values).
#include <optional>
#include <vector>

#include "jit/lax.h"
#include "jit/promotion.h"
#include "jit/tensor_arithmetic.h"
#include "jit/trace.h"
#include "lib/numpy/internal.h"
#include "spmd/numpy.h"

namespace spmd::numpy {
namespace {

namespace lax = compiler::lax;
using kernels::Binary;
using kernels::Unary;

Tensor one_like(const Tensor& x) { return lax::full_like(x, 1.0); }

// √((1 - x)(x + 1)), as XLA's asin and acos compute √(1 - x²).
Tensor root_of_one_minus_square(const Tensor& x) {
  return lax::unary(Unary::kSqrt, (one_like(x) - x) * (x + one_like(x)));
}

// JAX's rsqrt(1 - x²), the derivative of asin.
Tensor asin_slope(const Tensor& x) { return lax::unary(Unary::kRsqrt, one_like(x) - x * x); }

}  // namespace

Tensor arctan2(const Tensor& a, const Tensor& b) {
  return compiler::binary("arctan2", Binary::kAtan2, a, b,
                          compiler::floating_of(compiler::promote(a.dtype(), b.dtype())));
}

// XLA's atan: atan2(x, 1). JAX's derivative: g / (1 + x²).
Tensor arctan(const Tensor& a) {
  const Tensor x = internal::floating("arctan", a);
  const Tensor value = internal::in_float32(
      x, [](const Tensor& v) { return lax::binary(Binary::kAtan2, v, one_like(v)); });
  return lax::with_vjp("atan", {x}, value, [](const auto& in, const Tensor& g) {
    const Tensor& v = in[0];
    return std::vector<std::optional<Tensor>>{g / (one_like(v) + v * v)};
  });
}

// XLA's asin: 2 · atan2(x, 1 + √((1 - x)(x + 1))), the doubling an addition. JAX's derivative:
// g · rsqrt(1 - x²).
Tensor arcsin(const Tensor& a) {
  const Tensor x = internal::floating("arcsin", a);
  const Tensor half = lax::binary(Binary::kAtan2, x, one_like(x) + root_of_one_minus_square(x));
  const Tensor value = half + half;
  return lax::with_vjp("asin", {x}, value, [](const auto& in, const Tensor& g) {
    return std::vector<std::optional<Tensor>>{g * asin_slope(in[0])};
  });
}

// XLA's acos: atan2(√((1 - x)(x + 1)), x). JAX's derivative: g · -rsqrt(1 - x²).
Tensor arccos(const Tensor& a) {
  const Tensor x = internal::floating("arccos", a);
  const Tensor value = lax::binary(Binary::kAtan2, root_of_one_minus_square(x), x);
  return lax::with_vjp("acos", {x}, value, [](const auto& in, const Tensor& g) {
    return std::vector<std::optional<Tensor>>{g * -asin_slope(in[0])};
  });
}

}  // namespace spmd::numpy
