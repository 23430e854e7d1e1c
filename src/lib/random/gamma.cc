// spmd::random's rejection samplers: gamma and loggamma (one RandomGammaOp over shape parameters
// broadcast to the sample's shape; beta and dirichlet compose it in Python as JAX does) and
// poisson (one RandomPoissonOp over the rates).
#include <fmt/format.h>

#include "jit/lax.h"
#include "jit/program.h"
#include "jit/trace.h"
#include "lib/random/gamma_form.h"
#include "lib/random/ops.h"
#include "spmd/error.h"
#include "spmd/numpy.h"
#include "spmd/numpy_eager.h"
#include "spmd/random.h"

namespace spmd::random {

Tensor gamma_in_form(const Tensor& key, const Tensor& a, kernels::GammaForm form) {
  const char* what = form == kernels::GammaForm::kSample ? "random.gamma" : "random.loggamma";
  compiler::trace_of(what, {&key, &a});
  if (key.dtype() != DType::kUInt32 || key.shape() != Shape{2}) {
    throw InvalidArgument(
        fmt::format("{}: the key must be one raw key, uint32[2] (as PRNGKey makes it), not {}",
                    what, compiler::type_text(key.dtype(), key.shape())));
  }
  if (a.dtype() != DType::kFloat32) {
    throw InvalidArgument(fmt::format("{}: samples float32 only; a is {}", what,
                                      compiler::type_text(a.dtype(), a.shape())));
  }
  return compiler::lax::bind(compiler::make_operation<compiler::RandomGammaOp>(form), {key, a});
}

Tensor gamma(const Tensor& key, const Tensor& a, bool log_space) {
  return gamma_in_form(key, a, log_space ? kernels::GammaForm::kLog : kernels::GammaForm::kSample);
}

Array gamma(const Array& key, const Array& a, bool log_space) {
  return numpy::detail::eager(
      log_space ? "random.loggamma" : "random.gamma", {&key, &a},
      [log_space](const std::vector<Tensor>& t) { return gamma(t[0], t[1], log_space); });
}

Tensor poisson(const Tensor& key, const Tensor& lam) {
  compiler::trace_of("random.poisson", {&key, &lam});
  if (key.dtype() != DType::kUInt32 || key.shape() != Shape{2} || lam.dtype() != DType::kFloat32) {
    throw InvalidArgument(fmt::format(
        "random.poisson: wants one raw key, uint32[2], and float32 rates, not {} and {}",
        compiler::type_text(key.dtype(), key.shape()),
        compiler::type_text(lam.dtype(), lam.shape())));
  }
  return compiler::lax::bind(compiler::make_operation<compiler::RandomPoissonOp>(), {key, lam});
}

Array poisson(const Array& key, const Array& lam) {
  return numpy::detail::eager("random.poisson", {&key, &lam},
                              [](const std::vector<Tensor>& t) { return poisson(t[0], t[1]); });
}

}  // namespace spmd::random
