// spmd::numpy::linalg (spmd/linalg.h): the factorization family's operations behind jnp.linalg's
// argument handling.
#include "spmd/linalg.h"

#include <fmt/format.h>

#include "jit/lax.h"
#include "jit/promotion.h"
#include "jit/trace.h"
#include "spmd/error.h"
#include "spmd/numpy.h"

namespace spmd {
namespace {

// `a`, checked to hold matrices, in the dtype the kernels factor (float32 or float64), and the
// dtype the result is given in.
std::pair<Tensor, DType> factorable(const char* what, const Tensor& a) {
  compiler::trace_of(what, {&a});
  if (a.shape().size() < 2) {
    throw InvalidArgument(fmt::format("{}: wants matrices (at least 2 dimensions), not {}", what,
                                      compiler::type_text(a.dtype(), a.shape())));
  }
  const DType result = compiler::floating_of(a.dtype());
  const DType work = result == DType::kFloat64 ? DType::kFloat64 : DType::kFloat32;
  return {numpy::astype(a, work), result};
}

// The last two dimensions exchanged.
Tensor transposed(const Tensor& a) {
  const auto rank = static_cast<int>(a.shape().size());
  return numpy::swapaxes(a, rank - 2, rank - 1);
}

}  // namespace
}  // namespace spmd

namespace spmd::numpy::linalg {

Tensor cholesky(const Tensor& a, bool upper) {
  const auto [x, result] = factorable("linalg.cholesky", a);
  const size_t rank = x.shape().size();
  if (x.shape()[rank - 1] != x.shape()[rank - 2]) {
    throw InvalidArgument(fmt::format("linalg.cholesky: wants square matrices, not {}",
                                      compiler::type_text(a.dtype(), a.shape())));
  }
  const Tensor l = compiler::lax::cholesky((x + transposed(x)) / Scalar(2.0));
  return astype(upper ? transposed(l) : l, result);
}

std::pair<Tensor, Tensor> qr(const Tensor& a) {
  const auto [x, result] = factorable("linalg.qr", a);
  return {astype(compiler::lax::qr_q(x), result), astype(compiler::lax::qr_r(x), result)};
}

}  // namespace spmd::numpy::linalg

namespace spmd::lax::linalg {

Tensor triangular_solve(const Tensor& a, const Tensor& b, const TriangularSolveOptions& options) {
  const auto [x, a_result] = factorable("lax.linalg.triangular_solve", a);
  const auto [y, result] = factorable("lax.linalg.triangular_solve", b);
  const DType work = x.dtype() == DType::kFloat64 || y.dtype() == DType::kFloat64 ? DType::kFloat64
                                                                                  : DType::kFloat32;
  return numpy::astype(
      compiler::lax::triangular_solve(
          numpy::astype(x, work), numpy::astype(y, work),
          {options.left_side, options.lower, options.transpose_a, options.unit_diagonal}),
      a_result == DType::kFloat64 ? a_result : result);
}

}  // namespace spmd::lax::linalg
