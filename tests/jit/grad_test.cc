// spmd::grad against central finite differences in float64 for every differentiable operation,
// the structure of tree gradients, value_and_grad and vjp, and the errors.
#include <gtest/gtest.h>
#include <spmd/spmd.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

namespace {

namespace jnp = spmd::numpy;
using spmd::Array;
using spmd::DType;
using spmd::HostArray;
using spmd::Shape;
using spmd::Tensor;

Array on_device(const std::vector<double>& v, const Shape& shape) {
  static const spmd::Mesh mesh({spmd::local_devices()[0]}, {"x"});
  HostArray h = HostArray::from_vector(v, shape);
  return spmd::make_array_from_callback(shape, spmd::NamedSharding(mesh, spmd::P()),
                                        [&](const spmd::Index&) { return h; });
}

using ScalarFn = std::function<Tensor(const Tensor&)>;

// f at x (float64), through jit.
double value_at(const ScalarFn& f, const std::vector<double>& x) {
  return spmd::jit(f)(on_device(x, {static_cast<int64_t>(x.size())})).to_host().data<double>()[0];
}

// The gradient through spmd::grad beside central differences, element by element.
void expect_matches_finite_differences(const std::string& name, const ScalarFn& f,
                                       const std::vector<double>& x) {
  SCOPED_TRACE(name);
  const HostArray g = spmd::grad(f)(on_device(x, {static_cast<int64_t>(x.size())})).to_host();
  ASSERT_EQ(g.dtype(), DType::kFloat64);
  const double h = 1e-6;
  for (size_t i = 0; i < x.size(); ++i) {
    std::vector<double> up = x, down = x;
    up[i] += h;
    down[i] -= h;
    const double numeric = (value_at(f, up) - value_at(f, down)) / (2 * h);
    EXPECT_NEAR(g.data<double>()[i], numeric, 1e-5 * (1 + std::abs(numeric))) << "element " << i;
  }
}

// Weights so that every output element counts differently.
Tensor weighted(const Tensor& y) {
  const Tensor w = jnp::astype(jnp::arange(y.size()), DType::kFloat64) * 0.37 + 0.5;
  return jnp::sum(y * jnp::reshape(w, y.shape()));
}

const std::vector<double> kX = {0.3, -1.2, 0.8, 2.1, -0.4, 1.7, 0.9, -2.3, 1.1, 0.6, -0.7, 1.4};

TEST(Grad, UnaryOperationsMatchFiniteDifferences) {
  const std::vector<std::pair<std::string, std::function<Tensor(const Tensor&)>>> ops = {
      {"negative", [](const Tensor& t) { return -t; }},
      {"exp", [](const Tensor& t) { return jnp::exp(t); }},
      {"log", [](const Tensor& t) { return jnp::log(jnp::abs(t) + 0.5); }},
      {"tanh", [](const Tensor& t) { return jnp::tanh(t); }},
      {"sqrt", [](const Tensor& t) { return jnp::sqrt(t * t + 1.0); }},
      {"rsqrt", [](const Tensor& t) { return jnp::rsqrt(t * t + 1.0); }},
      {"abs", [](const Tensor& t) { return jnp::abs(t); }},
      {"relu", [](const Tensor& t) { return jnp::relu(t); }},
      {"sign", [](const Tensor& t) { return jnp::sign(t) * t; }},
  };
  for (const auto& [name, op] : ops) {
    expect_matches_finite_differences(
        name, [op = op](const Tensor& x) { return weighted(op(x)); }, kX);
  }
}

// Composed of exp, expm1, log1p and sqrt with derivatives of their own (lax::with_vjp): each
// rule's gradient is the function's, on both sides of the compositions' branch points.
TEST(Grad, HyperbolicFunctionsHaveTheirOwnDerivatives) {
  const std::vector<std::pair<std::string, std::function<Tensor(const Tensor&)>>> ops = {
      {"sinh", [](const Tensor& t) { return jnp::sinh(t); }},
      {"cosh", [](const Tensor& t) { return jnp::cosh(t); }},
      {"arcsinh", [](const Tensor& t) { return jnp::arcsinh(t * 3.0); }},
      {"arccosh", [](const Tensor& t) { return jnp::arccosh(jnp::abs(t) + 1.25); }},
      {"arctanh", [](const Tensor& t) { return jnp::arctanh(t * 0.4); }},
      {"sinh of sinh", [](const Tensor& t) { return jnp::sinh(jnp::sinh(t)); }},
  };
  for (const auto& [name, op] : ops) {
    expect_matches_finite_differences(
        name, [op = op](const Tensor& x) { return weighted(op(x)); }, kX);
  }
  // The first derivative differentiated again: sinh'' = sinh.
  const auto first = spmd::grad([](const Tensor& t) { return jnp::sinh(t); });
  const auto second = spmd::grad([&](const Tensor& t) { return first(t); });
  for (double x : {-2.0, -0.5, 0.25, 1.5}) {
    const HostArray h = second(on_device({x}, {})).to_host();
    EXPECT_NEAR(h.data<double>()[0], std::sinh(x), 1e-12) << "sinh'' at " << x;
  }
}

// ψ'(x) by its series (recurrence up to x + 20, then the asymptotic expansion) and Euler's
// reflection below 1/2: an independent reference for the second derivative of lgamma.
double trigamma_reference(double x) {
  if (x < 0.5) {
    const double s = std::sin(M_PI * x);
    return M_PI * M_PI / (s * s) - trigamma_reference(1 - x);
  }
  double sum = 0;
  for (int k = 0; k < 20; ++k) sum += 1 / ((x + k) * (x + k));
  const double y = x + 20;
  const double y2 = y * y;
  return sum + 1 / y + 1 / (2 * y2) + 1 / (6 * y2 * y) - 1 / (30 * y2 * y2 * y) +
         1 / (42 * y2 * y2 * y2 * y);
}

// lgamma, digamma and erf_inv (kernels/xla_special.h in float64): values beside the C library's
// lgamma and erf, gradients beside finite differences, lgamma's second derivative (digamma's
// own rule, jit/ops/trigamma.h) beside trigamma's series, across the reflection below 1/2.
TEST(Grad, SpecialFunctionsMatchTheLibraryFiniteDifferencesAndTrigamma) {
  const auto lgamma = [](const Tensor& t) { return jnp::lgamma(t); };
  const auto digamma = [](const Tensor& t) { return jnp::digamma(t); };
  const HostArray values = spmd::jit(lgamma)(on_device(kX, {12})).to_host();
  const HostArray inverses =
      spmd::jit([](const Tensor& t) { return jnp::erf_inv(t * 0.4); })(on_device(kX, {12}))
          .to_host();
  for (size_t i = 0; i < kX.size(); ++i) {
    EXPECT_NEAR(values.data<double>()[i], std::lgamma(kX[i]), 1e-13) << "lgamma at " << kX[i];
    EXPECT_NEAR(std::erf(inverses.data<double>()[i]), kX[i] * 0.4, 1e-15) << kX[i];
  }
  for (const auto& [name, op] : std::vector<std::pair<std::string, ScalarFn>>{
           {"lgamma", lgamma}, {"digamma", digamma}, {"erf_inv", [](const Tensor& t) {
                                                        return jnp::erf_inv(t * 0.4);
                                                      }}}) {
    expect_matches_finite_differences(
        name, [op = op](const Tensor& x) { return weighted(op(x)); }, kX);
  }
  const auto second = spmd::grad([](const Tensor& t) {
    return spmd::grad([](const Tensor& u) { return jnp::lgamma(u); })(t);
  });
  for (double x : {-2.3, -0.7, -0.4, 0.3, 0.5, 0.9, 1.0, 2.1, 7.5, 30.0}) {
    const double want = trigamma_reference(x);
    EXPECT_NEAR(second(on_device({x}, {})).to_host().data<double>()[0], want,
                1e-11 * std::abs(want))
        << "lgamma'' at " << x;
  }
  // The poles and the ends of erf_inv's domain, and JAX's refusal of an integer operand.
  const HostArray edges =
      spmd::jit([](const Tensor& t) {
        return jnp::stack({jnp::lgamma(t), jnp::digamma(t), jnp::erf_inv(t * 0.5)});
      })(on_device({0.0, -2.0, 2.0, 3.0}, {4}))
          .to_host();
  const std::span<const double> e = edges.data<double>();
  EXPECT_TRUE(std::isinf(e[0]) && std::isinf(e[1]));    // lgamma at 0 and -2
  EXPECT_NEAR(e[2], 0.0, 1e-15);                        // lgamma(2) = log 1
  EXPECT_TRUE(std::isnan(e[4]) && std::isnan(e[5]));    // digamma at the poles
  EXPECT_TRUE(e[10] == INFINITY && std::isnan(e[11]));  // erf_inv(1), erf_inv(1.5)
  EXPECT_THROW(spmd::jit([](const Tensor& t) { return jnp::lgamma(t); })(spmd::device_put(
                   HostArray::from_vector(std::vector<int32_t>{1, 2}, {2}),
                   spmd::NamedSharding(spmd::Mesh({spmd::local_devices()[0]}, {"x"}), spmd::P()))),
               spmd::InvalidArgument);
}

TEST(Grad, AFloatConvertPassesTheCotangentBackInTheInputsDtype) {
  // Not by finite differences: float32 rounding would drown a step of 1e-6.
  const HostArray g =
      spmd::grad([](const Tensor& t) {
        return jnp::sum(jnp::astype(jnp::astype(t, DType::kFloat32), DType::kFloat64) * 3.0);
      })(on_device(kX, {12}))
          .to_host();
  ASSERT_EQ(g.dtype(), DType::kFloat64);
  for (int i = 0; i < 12; ++i) EXPECT_EQ(g.data<double>()[i], 3.0);
}

TEST(Grad, BinaryOperationsMatchFiniteDifferencesInBothOperands) {
  const std::vector<std::pair<std::string, std::function<Tensor(const Tensor&, const Tensor&)>>>
      ops = {
          {"add", [](const Tensor& a, const Tensor& b) { return a + b; }},
          {"subtract", [](const Tensor& a, const Tensor& b) { return a - b; }},
          {"multiply", [](const Tensor& a, const Tensor& b) { return a * b; }},
          {"divide", [](const Tensor& a, const Tensor& b) { return a / (b * b + 1.0); }},
          {"power",
           [](const Tensor& a, const Tensor& b) { return jnp::power(jnp::abs(a) + 0.5, b); }},
          {"maximum", [](const Tensor& a, const Tensor& b) { return jnp::maximum(a, b); }},
          {"minimum", [](const Tensor& a, const Tensor& b) { return jnp::minimum(a, b); }},
          {"where",
           [](const Tensor& a, const Tensor& b) { return jnp::where(a > b, a * 2.0, b * b); }},
          {"broadcast",
           [](const Tensor& a, const Tensor& b) {
             return jnp::reshape(a, {2, 3}) * jnp::sum(b) +
                    jnp::slice(jnp::reshape(b, {2, 3}), {0, 0}, {1, 3});
           }},
      };
  for (const auto& [name, op] : ops) {
    // One input, split in two by slices (so slice's rule is exercised too).
    expect_matches_finite_differences(
        name,
        [op = op](const Tensor& x) {
          return weighted(op(jnp::slice(x, {0}, {6}), jnp::slice(x, {6}, {12})));
        },
        kX);
  }
}

TEST(Grad, ReductionsContractionsAndShapesMatchFiniteDifferences) {
  const std::vector<std::pair<std::string, std::function<Tensor(const Tensor&)>>> ops = {
      {"sum-axis",
       [](const Tensor& t) {
         return jnp::sum(jnp::reshape(t, {3, 4}), {0});
       }},
      {"mean",
       [](const Tensor& t) {
         return jnp::mean(jnp::reshape(t, {3, 4}), {1}, true);
       }},
      {"max",
       [](const Tensor& t) {
         return jnp::max(jnp::reshape(t, {3, 4}), {1});
       }},
      {"min",
       [](const Tensor& t) {
         return jnp::min(jnp::reshape(t, {3, 4}));
       }},
      {"matmul",
       [](const Tensor& t) {
         return jnp::matmul(jnp::reshape(t, {3, 4}), jnp::transpose(jnp::reshape(t, {3, 4})));
       }},
      {"einsum",
       [](const Tensor& t) {
         return jnp::einsum("ij,kj->ik", jnp::reshape(t, {2, 6}), jnp::reshape(t, {2, 6}));
       }},
      {"transpose",
       [](const Tensor& t) {
         return jnp::transpose(jnp::reshape(t, {2, 3, 2}), {2, 0, 1});
       }},
      {"broadcast_to",
       [](const Tensor& t) {
         return jnp::broadcast_to(jnp::reshape(t, {1, 12}), {3, 12});
       }},
      {"concatenate",
       [](const Tensor& t) {
         return jnp::concatenate({t * t, jnp::slice(t, {2}, {5})});
       }},
      {"softmax",
       [](const Tensor& t) {
         return jnp::softmax(jnp::reshape(t, {3, 4}));
       }},
      {"logsumexp",
       [](const Tensor& t) {
         return jnp::logsumexp(jnp::reshape(t, {3, 4}), {1});
       }},
      {"expand-squeeze", [](const Tensor& t) { return jnp::squeeze(jnp::expand_dims(t, 0)); }},
      {"cumsum-rows",
       [](const Tensor& t) {
         return jnp::cumsum(jnp::reshape(t, {3, 4}), 1);
       }},
      {"cumsum-columns",
       [](const Tensor& t) {
         return jnp::cumsum(jnp::reshape(t, {3, 4}), 0);
       }},
      {"cumsum-flat", [](const Tensor& t) { return jnp::cumsum(t); }},
  };
  for (const auto& [name, op] : ops) {
    expect_matches_finite_differences(
        name, [op = op](const Tensor& x) { return weighted(op(x)); }, kX);
  }
}

TEST(Grad, TreeGradientsHaveTheirArgumentsStructure) {
  spmd::Tree<Array> params{{"w", on_device({0.5, -1, 2, 0.25}, {2, 2})}};
  params["bias"]["b"] = on_device({0.1, 0.2}, {2});
  const Array x = on_device({1, 2, 3, 4, 5, 6}, {3, 2});
  auto loss = [](const spmd::Tree<Tensor>& p, const Tensor& in) {
    const Tensor y = jnp::matmul(in, p.at("w").leaf()) + p.at("bias").at("b").leaf();
    return jnp::mean(y * y);
  };
  const auto [value, grads] = spmd::value_and_grad(loss)(params, x);
  EXPECT_EQ(grads.structure(), params.structure());
  // d/db mean(y²) = 2 * mean over rows of y, per column; computed here from y.
  const HostArray w = params.at("w").leaf().to_host();
  const double in[3][2] = {{1, 2}, {3, 4}, {5, 6}};
  double total = 0;
  for (int c = 0; c < 2; ++c) {
    double db = 0;
    for (int r = 0; r < 3; ++r) {
      const double y =
          in[r][0] * w.data<double>()[c] + in[r][1] * w.data<double>()[2 + c] + 0.1 * (c + 1);
      db += 2 * y / 6;
      total += y * y / 6;
    }
    EXPECT_NEAR(grads.at("bias").at("b").leaf().to_host().data<double>()[c], db, 1e-12);
  }
  EXPECT_NEAR(value.to_host().data<double>()[0], total, 1e-12);
}

TEST(Grad, VjpTakesACotangentAndGradComposesWithJit) {
  const Array x = on_device({1, 2, 3}, {3});
  auto f = spmd::jit([](const Tensor& t) {
    auto [y, pullback] = spmd::vjp([](const Tensor& u) { return u * u; }, t);
    const Tensor g = pullback(jnp::ones({3}, DType::kFloat64) * 3.0)[0];  // 3 * 2u
    const Tensor inner = spmd::grad([](const Tensor& u) { return jnp::sum(jnp::exp(u)); })(t);
    return std::vector<Tensor>{g, inner, y};
  });
  const std::vector<Array> out = f(x);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(out[0].to_host().data<double>()[i], 6.0 * (i + 1));
    EXPECT_DOUBLE_EQ(out[1].to_host().data<double>()[i], std::exp(i + 1.0));
  }
}

TEST(Grad, OnlyTheWantedGradientIsComputed) {
  // d/dw sum(x · w) = xᵀ · 1: one product. The input's gradient (g · wᵀ) and the forward product
  // (which the rule does not read) are never lowered.
  const Array x = on_device({1, 2, 3, 4, 5, 6}, {3, 2});
  const Array w = on_device({0.5, -1, 2, 0.25}, {2, 2});
  auto dw = spmd::jit(spmd::grad(
      [](const Tensor& weights, const Tensor& in) { return jnp::sum(jnp::matmul(in, weights)); }));
  const std::string text = dw.lower(w, x).as_text();
  size_t dots = 0;
  for (size_t at = text.find("= dot"); at != std::string::npos; at = text.find("= dot", at + 1))
    ++dots;
  EXPECT_EQ(dots, 1u) << text;
  const HostArray g = dw(w, x).to_host();
  EXPECT_EQ(g.data<double>()[0], 1 + 3 + 5);
  EXPECT_EQ(g.data<double>()[3], 2 + 4 + 6);
}

// sinh carries a derivative of its own (a custom_vjp operation around its composition). In the
// compiled program that operation is gone, so the element-wise steps on both sides of it make
// one chain, and equal constants are one; the value and grad's derivative are unchanged.
TEST(Grad, AFunctionWithItsOwnDerivativeFusesWithItsNeighboursAndKeepsIt) {
  const Array x = on_device({-1.5, -0.25, 0.5, 2}, {4});
  const HostArray two = HostArray::from_vector(std::vector<double>{2, 2, 2, 2}, {4});
  const HostArray three = HostArray::from_vector(std::vector<double>{3, 3, 3, 3}, {4});
  const auto f = [&](const Tensor& t) {
    return jnp::multiply(jnp::sinh(jnp::multiply(t, jnp::asarray(two)) + 1.0),
                         jnp::add(jnp::asarray(two), jnp::asarray(three)));
  };
  auto jitted = spmd::jit(f);
  const std::string text = jitted.lower(x).as_text();
  EXPECT_EQ(text.find("custom_vjp"), std::string::npos) << text;
  size_t constants = 0;
  for (size_t at = text.find("= constant"); at != std::string::npos;
       at = text.find("= constant", at + 1)) {
    ++constants;
  }
  EXPECT_EQ(constants, 2U) << text;  // two, not three: equal bytes are one constant
  EXPECT_EQ(text.find("= fused"), text.rfind("= fused")) << text;  // one chain
  const HostArray got = jitted(x).to_host();
  auto dfdx = spmd::jit(spmd::grad([&](const Tensor& t) { return jnp::sum(f(t)); }));
  const HostArray g = dfdx(x).to_host();
  const std::vector<double> at{-1.5, -0.25, 0.5, 2};
  for (size_t i = 0; i < at.size(); ++i) {
    EXPECT_NEAR(got.data<double>()[i], 5 * std::sinh(2 * at[i] + 1),
                1e-12 * (1 + std::abs(got.data<double>()[i])))
        << i;
    EXPECT_NEAR(g.data<double>()[i], 10 * std::cosh(2 * at[i] + 1),
                1e-12 * (1 + std::abs(g.data<double>()[i])))
        << i;
  }
}

TEST(Grad, IntegerPathsNonScalarResultsAndIntegerArgumentsAreRefused) {
  const Array x = on_device({1.5, 2.5}, {2});
  auto through_int = spmd::grad([](const Tensor& t) {
    return jnp::sum(jnp::astype(jnp::astype(t, DType::kInt32), DType::kFloat64));
  });
  try {
    through_int(x);
    FAIL() << "differentiated through an integer convert";
  } catch (const spmd::InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("differentiating through convert from int32"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(spmd::grad([](const Tensor& t) { return t * 2.0; })(x), spmd::InvalidArgument);
  HostArray ints = HostArray::from_vector(std::vector<int32_t>{1, 2}, {2});
  static const spmd::Mesh mesh({spmd::local_devices()[0]}, {"x"});
  const Array xi = spmd::make_array_from_callback({2}, spmd::NamedSharding(mesh, spmd::P()),
                                                  [&](const spmd::Index&) { return ints; });
  EXPECT_THROW(spmd::grad([](const Tensor& t) { return jnp::sum(t * 2.0); })(xi),
               spmd::InvalidArgument);
}

}  // namespace
