// spmd::grad, spmd::value_and_grad, spmd::vjp — reverse-mode differentiation of functions over
// Tensors (jax.grad, jax.value_and_grad, jax.vjp).
//
//   auto loss = [](const spmd::Tree<spmd::Tensor>& p, spmd::Tensor x, spmd::Tensor y) {
//     return jnp::mean(jnp::power(jnp::matmul(x, p.at("w").leaf()) + p.at("b").leaf() - y, 2));
//   };
//   auto step = spmd::jit([&](const spmd::Tree<spmd::Tensor>& p, spmd::Tensor x, spmd::Tensor y) {
//     auto [value, grads] = spmd::value_and_grad(loss)(p, x, y);   // grads: a tree like p
//     return grads;
//   });
//
// grad<Argnums...>(fn) (default: argument 0) returns a callable with fn's arguments. Called with
// Tensors (inside a jit, or inside another grad), it traces fn, then appends the backward program
// to the same trace and returns the gradient of fn's scalar result with respect to the selected
// arguments: one value of the selected argument's type (a Tensor, std::vector or std::map of
// Tensors, or a Tree<Tensor>: the gradient has the argument's structure), or a std::tuple of them
// for several Argnums. Called with Arrays (one selected argument), it runs as its own jit.
// Argnums are template parameters because C++ return types are static; JAX's argnums=(0, 1)
// is grad<0, 1>.
//
// value_and_grad returns std::pair{value, gradient}. vjp(fn, primals...) returns fn's result
// and a function from a cotangent of the result's shape to the primals' gradients.
//
// Every floating operation of spmd::numpy has its derivative, as JAX defines it, kinks included:
// maximum and minimum split the cotangent evenly at ties, max/min reductions share it among the
// elements equal to the result, relu has derivative 0 at 0 (jax.nn.relu's), abs has +1 at 0
// (lax.abs's select(x >= 0, g, -g)), sign 0, x ** b has derivative 0 in b where x is 0, and
// x ** n for a Python-style integer n is lax.integer_pow (products, so n = 0 gives 0 at x = 0).
// Differentiating through an integer or bool result (astype to an integer, argmax, a comparison
// feeding arithmetic) throws InvalidArgument naming the operation; so does a non-scalar result for
// grad, or a non-floating argument.
//
// The partitioner handles the backward program like any other, and a gradient's layout is the
// one propagation gives it, as JAX's compiler gives it: under data parallelism (replicated
// parameters, batch split) the gradient of a mean loss comes out replicated, reduced across the
// batch axis with no explicit pmean; a parameter split along a dimension its use contracts (FSDP)
// is gathered for that use, and its gradient comes out replicated as in JAX (a sharding
// constraint or out_shardings keeps it split).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "spmd/jit.h"
#include "spmd/tensor.h"
#include "spmd/tensor_leaves.h"
#include "spmd/tree.h"

namespace spmd {

// The gradients of `out` (a scalar; seeded with 1) or, with `cotangent`, the vector-Jacobian
// product, with respect to `wrt`, appended to their trace. Zero for a Tensor `out` does not
// depend on.
std::vector<Tensor> vjp_of(const Tensor& out, const std::vector<Tensor>& wrt);
std::vector<Tensor> vjp_of(const Tensor& out, const std::vector<Tensor>& wrt,
                           const Tensor& cotangent);

namespace lax {
// jax.lax.stop_gradient: the value `x`, which differentiation treats as a constant (its
// cotangent is dropped). Any dtype; no cost once compiled beyond the value itself.
Tensor stop_gradient(const Tensor& x);

// jax.custom_vjp's core: `value` (computed from `inputs` by any traced operations), whose
// cotangents for `inputs` grad takes from rule(inputs, g), one per input (nullopt for none),
// rather than from the operations that computed it. `name` names it in the program's text. The
// rule's operations are traced like user code (so they are differentiated again for a second
// derivative). With `batchable`, vmap calls the rule on batched inputs (so it must hold for any
// leading dimensions, as element-wise rules do); without, vmap maps the rule itself, tracing it
// on one slice of the inputs and the cotangent, as JAX batches a custom rule.
using CustomVjpRule =
    std::function<std::vector<std::optional<Tensor>>(const std::vector<Tensor>&, const Tensor&)>;
Tensor custom_vjp(const std::string& name, const std::vector<Tensor>& inputs, const Tensor& value,
                  CustomVjpRule rule, bool batchable = true);
}  // namespace lax

namespace detail {

// A Tensor equal to `x` (jax.lax's copy_p: same bits) that differentiation tells apart from it.
Tensor distinct_copy(const Tensor& x);

using LeafKey = std::pair<const void*, int>;  // a Tensor's trace and value

// Counts the leaves of `arg` by trace and value (nothing for an argument of no Tensors).
template <class T>
void count_leaves(const T& arg, std::map<LeafKey, int>& count) {
  if constexpr (requires(std::vector<Tensor> & v) { add_leaves(arg, v); }) {
    std::vector<Tensor> leaves;
    add_leaves(arg, leaves);
    for (const Tensor& t : leaves) ++count[{t.trace().get(), t.value()}];
  }
}

// `arg` with every leaf that occurs more than once among the arguments replaced by a copy of
// its own. The copies are what is differentiated: a Tensor's own cotangent would be the total.
template <class T>
void separate(T& arg, const std::map<LeafKey, int>& count) {
  std::vector<Tensor> leaves;
  add_leaves(arg, leaves);
  for (Tensor& t : leaves) {
    if (count.at({t.trace().get(), t.value()}) > 1) t = distinct_copy(t);
  }
  std::span<const Tensor> rest(leaves);
  arg = rebuild(arg, rest);
}

// The traced value and the gradients of the arguments Argnums select. As in JAX, each selected
// argument is differentiated on its own: one Tensor passed twice, f(x, x), gets each position's
// partial derivative rather than the total in both, and an unselected argument holding the
// same Tensor is a constant to the selected one.
template <int... Argnums, class Fn, class... Args>
auto value_and_grads(const Fn& fn, const Args&... args) {
  std::tuple<Args...> own{args...};
  std::map<LeafKey, int> count;
  (count_leaves(args, count), ...);
  (separate(std::get<Argnums>(own), count), ...);
  const Tensor value = std::apply(fn, own);
  std::vector<Tensor> wrt;
  (add_leaves(std::get<Argnums>(own), wrt), ...);
  const std::vector<Tensor> grads = vjp_of(value, wrt);
  std::span<const Tensor> rest(grads);
  auto selected = std::tuple{rebuild(std::get<Argnums>(own), rest)...};
  return std::pair{value, std::move(selected)};
}

}  // namespace detail

template <class Fn, bool WithValue, int... Argnums>
class Grad {
 public:
  explicit Grad(Fn fn) : fn_(std::move(fn)), compiled_(std::make_shared<Compiled>()) {}
  // A copy compiles on its own: the jit a Grad makes holds a copy of it, which must not hold that
  // jit in turn.
  Grad(const Grad& other) : fn_(other.fn_), compiled_(std::make_shared<Compiled>()) {}
  Grad& operator=(const Grad&) = delete;

  template <class... Args>
  auto operator()(const Args&... args) const {
    if constexpr ((detail::is_array_argument<Args> || ...)) {
      static_assert(sizeof...(Argnums) == 1, "grad over Arrays selects one argument");
      std::call_once(compiled_->once, [this] {
        // Rounding every product, as JAX's grad outside jit computes one operation at a time.
        compiled_->jitted = std::make_shared<Jitted<Grad>>(
            *this, JitOptions{.name = "grad", .contract_products = false});
      });
      return (*compiled_->jitted)(args...);
    } else {
      // Not a structured binding: the lambda below captures it (clang before 16 refuses that).
      auto value_grads = detail::value_and_grads<Argnums...>(fn_, args...);
      auto result = [&] {
        if constexpr (sizeof...(Argnums) == 1) {
          return std::move(std::get<0>(value_grads.second));
        } else {
          return std::move(value_grads.second);
        }
      }();
      if constexpr (WithValue) {
        return std::pair{value_grads.first, std::move(result)};
      } else {
        return result;
      }
    }
  }

 private:
  // The jit of this Grad over Arrays, made once even when several threads call at once.
  struct Compiled {
    std::once_flag once;
    std::shared_ptr<Jitted<Grad>> jitted;
  };
  Fn fn_;
  std::shared_ptr<Compiled> compiled_;
};

namespace detail {

// Grad over Argnums, argument 0 when none are given.
template <bool WithValue, int... Argnums, class Fn>
auto make_grad(Fn fn) {
  if constexpr (sizeof...(Argnums) == 0) {
    return Grad<Fn, WithValue, 0>(std::move(fn));
  } else {
    return Grad<Fn, WithValue, Argnums...>(std::move(fn));
  }
}

}  // namespace detail

template <int... Argnums, class Fn>
auto grad(Fn fn) {
  return detail::make_grad<false, Argnums...>(std::move(fn));
}

template <int... Argnums, class Fn>
auto value_and_grad(Fn fn) {
  return detail::make_grad<true, Argnums...>(std::move(fn));
}

// fn's result on Tensor primals, and its vector-Jacobian product: a cotangent of the result's
// shape and dtype in, the primals' gradients out (in order).
template <class Fn, class... Primals>
std::pair<Tensor, std::function<std::vector<Tensor>(const Tensor&)>> vjp(
    const Fn& fn, const Primals&... primals) {
  const Tensor out = std::invoke(fn, primals...);
  std::vector<Tensor> wrt{primals...};
  return {out, [out, wrt](const Tensor& cotangent) { return vjp_of(out, wrt, cotangent); }};
}

}  // namespace spmd
