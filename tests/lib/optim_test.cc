// spmd::optim against Optax's formulas, computed here step by step in float64.
#include <gtest/gtest.h>
#include <spmd/spmd.h>

#include <cmath>
#include <string>
#include <vector>

namespace {

namespace jnp = spmd::numpy;
using spmd::Array;
using spmd::HostArray;
using spmd::Tensor;
using spmd::Tree;

Array on_device(const std::vector<double>& v) {
  static const spmd::Mesh mesh({spmd::local_devices()[0]}, {"x"});
  HostArray h = HostArray::from_vector(v, {static_cast<int64_t>(v.size())});
  return spmd::make_array_from_callback(h.shape(), spmd::NamedSharding(mesh, spmd::P()),
                                        [&](const spmd::Index&) { return h; });
}

std::vector<double> values(const Array& a) {
  const HostArray h = a.to_host();
  return {h.data<double>().begin(), h.data<double>().end()};
}

// Three steps of `opt` on params {"a": [1, -2], "b": {"c": [0.5]}} with the gradient of
// sum(p²·(1, 2, 3)) (so 2·p·weight), returning the parameters after each step.
std::vector<std::vector<double>> three_steps(const spmd::optim::GradientTransformation& opt) {
  Tree<Array> params{{"a", on_device({1.0, -2.0})}};
  params["b"]["c"] = on_device({0.5});
  Tree<Array> state = opt.init(params);
  auto loss = [](const Tree<Tensor>& p) {
    return jnp::sum(p.at("a").leaf() * p.at("a").leaf() *
                    jnp::asarray(HostArray::from_vector(std::vector<double>{1, 2}, {2}))) +
           jnp::sum(p.at("b").at("c").leaf() * p.at("b").at("c").leaf() * 3.0);
  };
  auto step = spmd::jit([&](const Tree<Tensor>& p, const Tree<Tensor>& s) {
    const auto [updates, next] = opt.update(spmd::grad(loss)(p), s, p);
    return Tree<Tensor>{{"params", spmd::optim::apply_updates(p, updates)}, {"state", next}};
  });
  std::vector<std::vector<double>> out;
  for (int i = 0; i < 3; ++i) {
    Tree<Array> r = step(params, state);
    params = r.at("params");
    state = r.at("state");
    std::vector<double> flat;
    for (const Array& leaf : spmd::tree_leaves(params)) {
      for (double v : values(leaf)) flat.push_back(v);
    }
    out.push_back(flat);
  }
  return out;
}

// The same three steps by Optax's formulas, in plain arithmetic. kind: 0 sgd, 1 momentum,
// 2 nesterov, 3 adam, 4 adamw.
std::vector<std::vector<double>> reference(int kind, double lr, double b1, double b2, double eps,
                                           double wd) {
  std::vector<double> p = {1.0, -2.0, 0.5};  // leaves in key order: a[0], a[1], b.c
  const std::vector<double> weight = {1, 2, 3};
  std::vector<double> trace(3, 0), mu(3, 0), nu(3, 0);
  std::vector<std::vector<double>> out;
  for (int t = 1; t <= 3; ++t) {
    for (size_t i = 0; i < 3; ++i) {
      const double g = 2 * p[i] * weight[i];
      double u = 0;
      if (kind == 0) u = -lr * g;
      if (kind == 1 || kind == 2) {
        trace[i] = g + b1 * trace[i];
        u = -lr * (kind == 2 ? g + b1 * trace[i] : trace[i]);
      }
      if (kind >= 3) {
        mu[i] = b1 * mu[i] + (1 - b1) * g;
        nu[i] = b2 * nu[i] + (1 - b2) * g * g;
        const double m_hat = mu[i] / (1 - std::pow(b1, t));
        const double v_hat = nu[i] / (1 - std::pow(b2, t));
        u = -lr * (m_hat / (std::sqrt(v_hat) + eps) + (kind == 4 ? wd * p[i] : 0));
      }
      p[i] += u;
    }
    out.push_back(p);
  }
  return out;
}

void expect_same(const std::vector<std::vector<double>>& got,
                 const std::vector<std::vector<double>>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t s = 0; s < got.size(); ++s) {
    for (size_t i = 0; i < 3; ++i)
      EXPECT_NEAR(got[s][i], want[s][i], 1e-12) << "step " << s << " leaf " << i;
  }
}

TEST(Optim, SgdPlainWithMomentumAndNesterovFollowOptax) {
  expect_same(three_steps(spmd::optim::sgd(0.1)), reference(0, 0.1, 0, 0, 0, 0));
  expect_same(three_steps(spmd::optim::sgd(0.1, 0.9)), reference(1, 0.1, 0.9, 0, 0, 0));
  expect_same(three_steps(spmd::optim::sgd(0.1, 0.9, true)), reference(2, 0.1, 0.9, 0, 0, 0));
}

TEST(Optim, AdamAndAdamwFollowOptax) {
  expect_same(three_steps(spmd::optim::adam(0.05)), reference(3, 0.05, 0.9, 0.999, 1e-8, 0));
  expect_same(three_steps(spmd::optim::adamw(0.05, 0.8, 0.99, 1e-6, 0.01)),
              reference(4, 0.05, 0.8, 0.99, 1e-6, 0.01));
}

TEST(Optim, StateIsATreeWithACountAndMomentsShapedAsTheParameters) {
  Tree<Array> params{{"w", on_device({1.0, 2.0, 3.0})}};
  const Tree<Array> state = spmd::optim::adam(1e-3).init(params);
  EXPECT_EQ(state.structure(), "{count:*,mu:{w:*,},nu:{w:*,},}");
  EXPECT_EQ(state.at("count").leaf().dtype(), spmd::DType::kInt32);
  EXPECT_EQ(values(state.at("mu").at("w").leaf()), (std::vector<double>{0, 0, 0}));
}

}  // namespace
