// spmd.random's raw-key functions over spmd/random.h: on Arrays (eager) and on Tensors (traced).
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "bindings.h"
#include "spmd/random.h"

namespace spmd::python {
namespace {

// `name` for keys of type K (Array or Tensor).
template <class K>
void samplers(nb::module_& r) {
  r.def("split", [](const K& key, int64_t n) { return random::split(key, n); });
  r.def("fold_in", [](const K& key, uint32_t data) { return random::fold_in(key, data); });
  r.def("normal", [](const K& key, const Shape& shape, const std::string& dtype) {
    return random::normal(key, shape, dtype_named(dtype));
  });
  r.def("uniform", [](const K& key, const Shape& shape, const std::string& dtype, double minval,
                      double maxval) {
    return random::uniform(key, shape, dtype_named(dtype), minval, maxval);
  });
  r.def("randint", [](const K& key, const Shape& shape, int64_t minval, int64_t maxval,
                      const std::string& dtype) {
    return random::randint(key, shape, minval, maxval, dtype_named(dtype));
  });
  r.def("bits", [](const K& key, const Shape& shape, const std::string& dtype) {
    return random::bits(key, shape, dtype_named(dtype));
  });
  r.def("truncated_normal",
        [](const K& key, double lower, double upper, const Shape& shape, const std::string& dtype) {
          return random::truncated_normal(key, lower, upper, shape, dtype_named(dtype));
        });
  r.def("bernoulli", [](const K& key, double p, const Shape& shape) {
    return random::bernoulli(key, p, shape);
  });
  r.def("gumbel", [](const K& key, const Shape& shape, const std::string& dtype) {
    return random::gumbel(key, shape, dtype_named(dtype));
  });
  r.def("exponential", [](const K& key, const Shape& shape, const std::string& dtype) {
    return random::exponential(key, shape, dtype_named(dtype));
  });
  r.def("laplace", [](const K& key, const Shape& shape, const std::string& dtype) {
    return random::laplace(key, shape, dtype_named(dtype));
  });
  r.def("logistic", [](const K& key, const Shape& shape, const std::string& dtype) {
    return random::logistic(key, shape, dtype_named(dtype));
  });
  r.def("cauchy", [](const K& key, const Shape& shape, const std::string& dtype) {
    return random::cauchy(key, shape, dtype_named(dtype));
  });
  r.def("lognormal", [](const K& key, double sigma, const Shape& shape, const std::string& dtype) {
    return random::lognormal(key, sigma, shape, dtype_named(dtype));
  });
  r.def("permutation", [](const K& key, int64_t n) { return random::permutation(key, n); });
  r.def("permutation",
        [](const K& key, const K& x, int axis) { return random::permutation(key, x, axis); });
  r.def("choice", [](const K& key, int64_t n, const Shape& shape, bool replace) {
    return random::choice(key, n, shape, replace);
  });
  r.def("choice", [](const K& key, int64_t n, const Shape& shape, bool replace, const K& p) {
    return random::choice(key, n, shape, replace, p);
  });
  r.def(
      "choice",
      [](const K& key, const K& a, const Shape& shape, bool replace, const std::optional<K>& p,
         int axis) { return random::choice(key, a, shape, replace, p, axis); },
      nb::arg("key"), nb::arg("a"), nb::arg("shape"), nb::arg("replace"), nb::arg("p").none(),
      nb::arg("axis"));
}

}  // namespace

void bind_random(nb::module_& m) {
  nb::module_ r = m.def_submodule("random", "spmd::random on raw keys");
  r.def("PRNGKey", &random::PRNGKey);
  samplers<Array>(r);
  samplers<Tensor>(r);
  r.def("categorical", [](const Array& key, const Array& logits, int axis) {
    return random::categorical(key, logits, axis);
  });
  r.def(
      "categorical",
      [](const Tensor& key, const Tensor& logits, int axis, const std::optional<Shape>& shape) {
        return random::categorical(key, logits, axis, shape);
      },
      nb::arg("key"), nb::arg("logits"), nb::arg("axis"), nb::arg("shape").none());
  r.def(
      "bernoulli",
      [](const Tensor& key, const Tensor& p, const std::optional<Shape>& shape) {
        return random::bernoulli(key, p, shape);
      },
      nb::arg("key"), nb::arg("p"), nb::arg("shape").none());
  r.def("gamma", [](const Tensor& key, const Tensor& a, bool log_space) {
    return random::gamma(key, a, log_space);
  });
  r.def("poisson", [](const Tensor& key, const Tensor& lam) { return random::poisson(key, lam); });
  // JAX's compositions (spmd/random.h), on traced raw keys.
  r.def("lognormal_of_sigmas",
        [](const Tensor& key, const Tensor& sigma, const Shape& shape, const std::string& dtype) {
          return random::lognormal(key, sigma, shape, dtype_named(dtype));
        });
  r.def("rademacher", [](const Tensor& key, const Shape& shape, const std::string& dtype) {
    return random::rademacher(key, shape, dtype_named(dtype));
  });
  r.def("beta", [](const Tensor& key, const Tensor& a, const Tensor& b) {
    return random::beta(key, a, b);
  });
  r.def("dirichlet",
        [](const Tensor& key, const Tensor& alpha) { return random::dirichlet(key, alpha); });
  r.def("generalized_normal", [](const Tensor& key, double p, const Shape& shape) {
    return random::generalized_normal(key, p, shape);
  });
  r.def("ball", [](const Tensor& key, int64_t d, double p, const Shape& shape) {
    return random::ball(key, d, p, shape);
  });
  r.def("orthogonal", [](const Tensor& key, int64_t n, int64_t m, const Shape& shape) {
    return random::orthogonal(key, n, m, shape);
  });
  r.def("multivariate_normal",
        [](const Tensor& key, const Tensor& mean, const Tensor& cov, const Shape& shape) {
          return random::multivariate_normal(key, mean, cov, shape);
        });
}

}  // namespace spmd::python
