// spmd::optim: Optax's sgd, adam and adamw as traced tree operations.
#include "spmd/optim.h"

#include "spmd/grad.h"
#include "spmd/jit.h"
#include "spmd/numpy.h"

namespace spmd::optim {
namespace {

namespace jnp = spmd::numpy;

Tree<Tensor> zeros_like(const Tree<Tensor>& params) {
  return tree_map([](const Tensor& p) { return jnp::zeros_like(p); }, params);
}

// 1 − b^t for the step count t (int32 scalar), in the dtype of `like`.
Tensor bias_correction(double b, const Tensor& count, const Tensor& like) {
  const Tensor base = jnp::full({}, Scalar(b), like.dtype());
  return 1.0 - jnp::power(base, jnp::astype(count, like.dtype()));
}

std::pair<Tree<Tensor>, Tree<Tensor>> adam_update(double lr, double b1, double b2, double eps,
                                                  double weight_decay, const Tree<Tensor>& grads,
                                                  const Tree<Tensor>& state,
                                                  const Tree<Tensor>& params) {
  const Tree<Tensor> mu =
      tree_map([&](const Tensor& m, const Tensor& g) { return m * b1 + g * (1.0 - b1); },
               state.at("mu"), grads);
  const Tree<Tensor> nu =
      tree_map([&](const Tensor& v, const Tensor& g) { return v * b2 + g * g * (1.0 - b2); },
               state.at("nu"), grads);
  const Tensor count = state.at("count").leaf() + 1;
  Tree<Tensor> updates = tree_map(
      [&](const Tensor& m, const Tensor& v) {
        const Tensor m_hat = m / bias_correction(b1, count, m);
        const Tensor v_hat = v / bias_correction(b2, count, v);
        return m_hat / (jnp::sqrt(v_hat) + eps);
      },
      mu, nu);
  if (weight_decay != 0.0) {
    updates = tree_map([&](const Tensor& u, const Tensor& p) { return u + p * weight_decay; },
                       updates, params);
  }
  updates = tree_map([&](const Tensor& u) { return u * -lr; }, updates);
  return {updates, Tree<Tensor>{{"count", count}, {"mu", mu}, {"nu", nu}}};
}

GradientTransformation adam_like(double lr, double b1, double b2, double eps, double decay) {
  return GradientTransformation(
      [](const Tree<Tensor>& params) {
        return Tree<Tensor>{{"count", jnp::zeros({}, DType::kInt32)},
                            {"mu", zeros_like(params)},
                            {"nu", zeros_like(params)}};
      },
      [=](const Tree<Tensor>& grads, const Tree<Tensor>& state, const Tree<Tensor>& params) {
        return adam_update(lr, b1, b2, eps, decay, grads, state, params);
      });
}

}  // namespace

Tree<Array> GradientTransformation::init(const Tree<Array>& params) const {
  const Init init = init_;
  return jit([init](const Tree<Tensor>& p) { return init(p); }, {.name = "optim.init"})(params);
}

GradientTransformation sgd(double lr, double momentum, bool nesterov) {
  return GradientTransformation(
      [momentum](const Tree<Tensor>& params) {
        Tree<Tensor> state;
        if (momentum != 0.0) state.insert("trace", zeros_like(params));
        return state;
      },
      [=](const Tree<Tensor>& grads, const Tree<Tensor>& state, const Tree<Tensor>&) {
        if (momentum == 0.0) {
          return std::pair{tree_map([&](const Tensor& g) { return g * -lr; }, grads), state};
        }
        const Tree<Tensor> trace =
            tree_map([&](const Tensor& t, const Tensor& g) { return g + t * momentum; },
                     state.at("trace"), grads);
        const Tree<Tensor> direction =
            nesterov ? tree_map([&](const Tensor& t, const Tensor& g) { return g + t * momentum; },
                                trace, grads)
                     : trace;
        return std::pair{tree_map([&](const Tensor& d) { return d * -lr; }, direction),
                         Tree<Tensor>{{"trace", trace}}};
      });
}

GradientTransformation adam(double lr, double b1, double b2, double eps) {
  return adam_like(lr, b1, b2, eps, 0.0);
}

GradientTransformation adamw(double lr, double b1, double b2, double eps, double weight_decay) {
  return adam_like(lr, b1, b2, eps, weight_decay);
}

Tree<Tensor> apply_updates(const Tree<Tensor>& params, const Tree<Tensor>& updates) {
  return tree_map([](const Tensor& p, const Tensor& u) { return p + jnp::astype(u, p.dtype()); },
                  params, updates);
}

}  // namespace spmd::optim
