// spmd::optim — gradient transformations with Optax's names and formulas, over trees of Tensors
// (traceable: a whole train step, forward, backward and update, compiles as one jit program).
//
//   const auto opt = spmd::optim::adam(1e-3);
//   spmd::Tree<spmd::Array> state = opt.init(params);            // outside jit: runs at once
//   auto step = spmd::jit([&](const Tree<Tensor>& p, const Tree<Tensor>& s, Tensor x, Tensor y) {
//     auto [loss, grads] = spmd::value_and_grad(loss_fn)(p, x, y);
//     auto [updates, next] = opt.update(grads, s, p);
//     return Tree<Tensor>{{"params", spmd::optim::apply_updates(p, updates)}, {"state", next},
//                         {"loss", loss}};
//   });
//
// The state is a Tree: it checkpoints and restores like the parameters. Its moments are laid out
// as the parameters they follow (when those are jit inputs). Formulas, with t the step count
// after this update (Optax's):
// - sgd(lr, momentum, nesterov): trace = g + momentum·trace; update = −lr·trace (nesterov:
//   −lr·(g + momentum·trace)); no momentum: −lr·g. State {"trace"} (empty without momentum).
// - adam(lr, b1, b2, eps): mu = b1·mu + (1−b1)·g; nu = b2·nu + (1−b2)·g²;
//   update = −lr · (mu / (1−b1^t)) / (sqrt(nu / (1−b2^t)) + eps). State {"count", "mu", "nu"}.
// - adamw(lr, b1, b2, eps, weight_decay): adam's, plus −lr·weight_decay·params.
// The count is int32, as Optax's; the moments have the parameters' dtypes.
#pragma once

#include <functional>
#include <utility>

#include "spmd/array.h"
#include "spmd/tensor.h"
#include "spmd/tree.h"

namespace spmd::optim {

class GradientTransformation {
 public:
  using Init = std::function<Tree<Tensor>(const Tree<Tensor>& params)>;
  using Update = std::function<std::pair<Tree<Tensor>, Tree<Tensor>>(
      const Tree<Tensor>& grads, const Tree<Tensor>& state, const Tree<Tensor>& params)>;
  GradientTransformation(Init init, Update update)
      : init_(std::move(init)), update_(std::move(update)) {}

  // The initial state for `params` (inside a trace).
  Tree<Tensor> init(const Tree<Tensor>& params) const { return init_(params); }
  // The initial state for `params`, computed at once (a jit of init).
  Tree<Array> init(const Tree<Array>& params) const;
  // (updates, new state); updates have the parameters' structure.
  std::pair<Tree<Tensor>, Tree<Tensor>> update(const Tree<Tensor>& grads, const Tree<Tensor>& state,
                                               const Tree<Tensor>& params) const {
    return update_(grads, state, params);
  }

 private:
  Init init_;
  Update update_;
};

GradientTransformation sgd(double learning_rate, double momentum = 0.0, bool nesterov = false);
GradientTransformation adam(double learning_rate, double b1 = 0.9, double b2 = 0.999,
                            double eps = 1e-8);
GradientTransformation adamw(double learning_rate, double b1 = 0.9, double b2 = 0.999,
                             double eps = 1e-8, double weight_decay = 1e-4);

// params + updates, leaf by leaf (optax.apply_updates).
Tree<Tensor> apply_updates(const Tree<Tensor>& params, const Tree<Tensor>& updates);

}  // namespace spmd::optim
