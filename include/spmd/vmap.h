// spmd::vmap — the vectorising map (jax.vmap): a function written for one example, applied to a
// batch as one program over the whole batch, not a loop.
//
//   auto predict = [](Tensor w, Tensor x) { return jnp::tanh(jnp::dot(x, w)); };  // x: f32[k]
//   auto batched = spmd::vmap(predict, {std::nullopt, 0});  // w shared, x mapped over axis 0
//   Tensor ys = batched(w, xs);                              // xs: f32[b, k] -> ys: f32[b, n]
//
// vmap(fn, in_axes, out_axes) returns a callable with fn's arguments: Tensors, std::vectors or
// std::maps of Tensors, or Tree<Tensor>s. `in_axes` gives each argument the axis its leaves are
// mapped over, or std::nullopt for an argument every slice shares; one entry applies to every
// argument (JAX's in_axes=0, the default), otherwise there is one per argument. Negative axes
// count from the end. `out_axes` places the slices' axis in each result leaf the same way (one
// entry for all, or one per leaf); std::nullopt there requires a result that is the same for
// every slice. The result has fn's structure (a Tensor, vector, map, tree, or a std::pair of
// them).
//
// Called with Tensors (inside jit, grad or another vmap) it traces fn once on one slice of each
// mapped argument, then replays what fn recorded through each operation's batching rule
// (src/jit/batching.h): the program computes all slices at once. Called with Arrays it runs as
// its own jit. It composes with grad both ways (grad(vmap(f)), vmap(grad(f)), per-example
// gradients) and nests (vmap(vmap(f))). Values fn closes over and keys it does not receive
// through a mapped argument are shared by every slice, as in JAX: vmap over keys, not over data,
// to draw different numbers per slice. A mapped axis may be sharded: the batching rules keep it
// a dimension of their own, which sharding propagation splits like any other, so per-example work
// stays on the devices holding its examples.
//
// Errors (InvalidArgument): an axis out of range for its argument (rank 0 cannot be mapped), no
// mapped argument at all, mapped axes of different sizes (naming each argument and size), an
// in_axes or out_axes of the wrong length, a result depending on a mapped argument with
// out_axes std::nullopt, and a shard_map inside the vmapped function (vmap inside a shard_map's
// body works). Not JAX's: axis_name (collectives over the mapped axis), axis_size, and in_axes
// given per leaf inside an argument.
#pragma once

#include <functional>
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

namespace spmd {

// One axis per argument (in_axes) or result leaf (out_axes); std::nullopt: not mapped.
using VmapAxes = std::vector<std::optional<int>>;

namespace detail {

// One call of a vmapped function over flat leaves, as vmap.h describes it: the slices fn is
// traced on, then its results batched.
class VmapCall {
 public:
  // Checks the leaves' axes (`labels` name each leaf in errors) and makes each mapped leaf's slice.
  VmapCall(const std::vector<Tensor>& leaves, const VmapAxes& axes,
           const std::vector<std::string>& labels);
  ~VmapCall();
  VmapCall(const VmapCall&) = delete;
  VmapCall& operator=(const VmapCall&) = delete;

  // What fn receives: the slice standing for each mapped leaf, an unmapped leaf itself.
  const std::vector<Tensor>& slices() const { return slices_; }
  // fn's result leaves over all slices, the slices' axis at `out_axes` (one entry for all).
  std::vector<Tensor> results(const std::vector<Tensor>& outs, const VmapAxes& out_axes);

 private:
  struct State;
  std::unique_ptr<State> state_;
  std::vector<Tensor> slices_;
};

// The in_axes entry of argument `index` of `count`.
std::optional<int> vmap_in_axis(const VmapAxes& in_axes, size_t index, size_t count);

}  // namespace detail

template <class Fn>
class Vmap {
 public:
  Vmap(Fn fn, VmapAxes in_axes, VmapAxes out_axes)
      : fn_(std::move(fn)),
        in_axes_(std::move(in_axes)),
        out_axes_(std::move(out_axes)),
        compiled_(std::make_shared<Compiled>()) {}
  // A copy compiles on its own: the jit a Vmap over Arrays makes holds a copy of it.
  Vmap(const Vmap& other)
      : fn_(other.fn_),
        in_axes_(other.in_axes_),
        out_axes_(other.out_axes_),
        compiled_(std::make_shared<Compiled>()) {}
  Vmap& operator=(const Vmap&) = delete;

  template <class... Args>
  auto operator()(const Args&... args) const {
    if constexpr ((detail::is_array_argument<Args> || ...)) {
      std::call_once(compiled_->once, [this] {
        // Rounding every product, as JAX's vmap outside jit computes one operation at a time.
        compiled_->jitted = std::make_shared<Jitted<Vmap>>(
            *this, JitOptions{.name = "vmap", .contract_products = false});
      });
      return (*compiled_->jitted)(args...);
    } else {
      std::vector<Tensor> leaves;
      VmapAxes axes;
      std::vector<std::string> labels;
      size_t index = 0;
      auto add = [&](const auto& arg) {
        const size_t before = leaves.size();
        detail::add_leaves(arg, leaves);
        const std::optional<int> axis = detail::vmap_in_axis(in_axes_, index, sizeof...(Args));
        for (size_t i = before; i < leaves.size(); ++i) {
          axes.push_back(axis);
          labels.push_back(leaves.size() - before == 1 ? "argument " + std::to_string(index)
                                                       : "argument " + std::to_string(index) +
                                                             " leaf " + std::to_string(i - before));
        }
        ++index;
      };
      (add(args), ...);
      detail::VmapCall call(leaves, axes, labels);
      std::span<const Tensor> rest(call.slices());
      // Braced initialisation evaluates left to right: the arguments take their slices in order.
      const auto sliced = std::tuple<Args...>{detail::rebuild(args, rest)...};
      const auto result = std::apply(fn_, sliced);
      std::vector<Tensor> outs;
      detail::add_leaves(result, outs);
      const std::vector<Tensor> batched = call.results(outs, out_axes_);
      std::span<const Tensor> back(batched);
      return detail::rebuild(result, back);
    }
  }

 private:
  // The jit of this Vmap over Arrays, made once even when several threads call at once.
  struct Compiled {
    std::once_flag once;
    std::shared_ptr<Jitted<Vmap>> jitted;
  };
  Fn fn_;
  VmapAxes in_axes_;
  VmapAxes out_axes_;
  std::shared_ptr<Compiled> compiled_;
};

// jax.vmap(fn, in_axes, out_axes).
template <class Fn>
Vmap<Fn> vmap(Fn fn, VmapAxes in_axes = {0}, VmapAxes out_axes = {0}) {
  return Vmap<Fn>(std::move(fn), std::move(in_axes), std::move(out_axes));
}

}  // namespace spmd
