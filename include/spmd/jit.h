// spmd::jit — global-view computation over process-spanning arrays (jax.jit with in_shardings
// and out_shardings), partitioned over the mesh automatically.
//
//   namespace jnp = spmd::numpy;
//   auto layer = spmd::jit([](spmd::Tensor x, spmd::Tensor w, spmd::Tensor b) {
//     return jnp::tanh(jnp::matmul(x, w) + b);        // global shapes
//   }, {.in_shardings = {batch, cols, spmd::NamedSharding(mesh, spmd::P("mp"))}});
//   spmd::Array y = layer(x, w, b);
//   std::cout << layer.lower(x, w, b).as_text();
//
// The function is written on global shapes with spmd::numpy (numpy.h). It takes Tensors,
// std::vector<Tensor>s, std::map<std::string, Tensor>s (a flat parameter dictionary, the shape of
// checkpoint::Tree) or Tree<Tensor>s (nested dictionaries, tree.h) and returns one of those; the
// jitted callable takes the same structures of spmd::Arrays and returns them of Arrays.
//
// Tracing and the cache. On the first call with a new signature — every input's shape, dtype and
// sharding, and the structure of vectors and maps — the function runs once on Tensors that record
// its operations into a typed program (tensor.h). The program is partitioned and cached; a later
// call with the same signature runs the cached per-device program without tracing. The function
// must therefore be pure: what it does besides operating on Tensors happens once per signature.
//
// Shardings. Every input is laid out on one mesh, as NamedSharding(mesh, spec): in_shardings
// (one per argument; an entry for a vector or map applies to each of its arrays) or, when absent
// or std::nullopt, the sharding the array has (which must then be a NamedSharding). An input laid
// out otherwise is resharded first (device_put). Each intermediate value gets a layout by
// propagation, following GSPMD's rules:
// - element-wise operations keep a common layout (the first operand's split dimensions win);
// - a reduction over a split dimension reduces locally, then across that dimension's mesh axes;
// - a contraction whose contracting dimension is split the same way on both sides makes partial
//   sums, reduced when they are used (psum, or psum_scatter when the use wants the result split);
//   split batch and free dimensions need no communication: (rows split) · (columns split) moves
//   nothing;
// - reshape keeps a split where its dimension survives (or is the major part of a merge or
//   split), transpose permutes splits, slicing, concatenation and argmax gather the dimension
//   they work along;
// - lax::with_sharding_constraint and out_shardings fix a value's layout where they stand, and
//   reach back through element-wise operations, broadcasts and transposes to values whose
//   operands are replicated, which are then computed in that layout (each device its part);
//   where an operand is split, forward propagation wins.
// Where two layouts meet, the value is moved with the named collectives (all_gather,
// all_to_all, psum, psum_scatter) or, when a dimension only becomes split, by each device
// keeping its part (no communication). A split that does not divide runs padded, as XLA tiles
// it (layout.h); the padding never reaches a result.
//
// Outputs. An output without an out_shardings entry gets the sharding jax.jit gives the same
// program: a second propagation follows Shardy's (op priorities; where operands' splits
// conflict the dimension stays whole), and the output is moved there at the end if the forward
// layout differs (src/jit/propagation.h). Where it cannot follow JAX (Explicit axes, or an
// operation it has no factor rule for: slices, concatenation, gathers, random bits, reshapes
// that merge or split dimensions, shard_map regions) the output keeps the forward layout.
//
// Explicit axes (AxisType::kExplicit, make_mesh's default): sharding in types, as JAX's. Each
// Tensor's type says which Explicit axes split each dimension (Tensor::sharding()); every
// operation gives its result the one JAX's rules give and the compiled program holds the value
// to it, so the splits over Explicit axes are the program's, not propagation's choice. Where
// JAX's rules find a result's split ambiguous or its operands' splits in conflict — a contraction
// whose contracting dimension is split on both sides, two operands split differently, a reshape
// of a split dimension that is not one split or one merge — the trace throws ShardingTypeError
// naming the operation and the operands' types; the remedies are out_sharding= (numpy.h) and
// reshard. Auto axes stay out of types and propagate as above, also on a mesh mixing both; a
// with_sharding_constraint may only place Auto axes there (on a mesh of Explicit axes only it
// asserts the type). While tracing, the jit's mesh is the mesh in scope (mesh_context.h) unless
// another is set, so a bare P(...) names a sharding on it.
//
// Results equal the same function computed on whole arrays in one process: exactly for integer
// and bool programs and for float programs whose reductions do not cross devices; a float sum
// across devices adds the devices' partial sums in another order, within the rounding of that
// reordering (a few ulp times the number of devices, relative to the sum of magnitudes).
//
// The same program everywhere. On the first call of a signature, the processes of the mesh
// compare a fingerprint of their traced programs (operations, shapes, dtypes, shardings) in one
// small collective. Processes that traced different programs — other input shapes on one of
// them, a branch on process_index() — all throw CollectiveMismatch naming two processes that
// differ and the first operation where their programs do, instead of hanging or computing
// garbage.
//
// Errors at trace time, in every process, name the operation, shapes and dtypes: shapes that do
// not broadcast, a contraction over unequal sizes, an axis out of range, a sharding naming an
// axis the mesh lacks, a Tensor used outside the jit that made it (InvalidArgument).
//
// Like every collective, a call is made by every process owning devices of the mesh, in the same
// order. A Jitted object may be called from several threads; calls take turns.
#pragma once

#include <cstdint>
#include <functional>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "spmd/array.h"
#include "spmd/sharding.h"
#include "spmd/tensor.h"
#include "spmd/tree.h"

namespace spmd {

struct JitOptions {
  // One per argument of the function; absent (or fewer entries): the input's own sharding.
  std::vector<std::optional<NamedSharding>> in_shardings;
  // One per output leaf (in order); absent: the layout jax.jit would give it (see Outputs).
  std::vector<std::optional<NamedSharding>> out_shardings;
  // Names the function in as_text() and in errors.
  std::string name = "fn";
  // Whether a float product and the one sum or difference reading it in an element-wise chain
  // are computed as one fused multiply-add, rounded once, as XLA's code for jax.jit computes them
  // on a CPU with FMA instructions (src/jit/contract.h). spmd's own transformations outside jit
  // (grad, vjp, jvp, vmap, an eager shard_map, optax's update) compile with false: JAX runs
  // those one operation at a time, each rounded.
  bool contract_products = true;
};

// A compiled program for one signature, for inspection (jax.stages.Lowered).
class Lowered {
 public:
  Lowered(std::string text, std::string global_text)
      : text_(std::move(text)), global_text_(std::move(global_text)) {}
  // The per-device program: the mesh, each operation with its local shapes, each inserted
  // collective with its mesh axes and the bytes one device sends into it, then the outputs'
  // layouts. A line that communicates starts with its collective's name after the "=":
  //   %7 = psum[mp] f32[4,8] %6   # 128 B
  std::string as_text() const { return text_; }
  // The step before: the traced program on global shapes, each value with the layout sharding
  // propagation gave it (a pending sum shows as "partial(mp)"), unused values marked so:
  //   %4 = dot f32[8,8] %2 %3 einsum=mk,kn->mn  : PartitionSpec('dp', None)
  std::string global_text() const { return global_text_; }

 private:
  std::string text_;
  std::string global_text_;
};

namespace lax {
// The value `x`, laid out as `sharding` at this point of the program
// (jax.lax.with_sharding_constraint). The sharding's mesh must be the jit's.
Tensor with_sharding_constraint(const Tensor& x, const NamedSharding& sharding);
}  // namespace lax

// jax.reshard: `x` laid out as `sharding` (a NamedSharding, or a bare P(...) on the mesh in
// scope, mesh_context.h). An Array is copied so (device_put). Inside jit, on a mesh with Explicit
// axes, the result's type becomes `sharding` (which may name Explicit axes only, as JAX's;
// InvalidArgument otherwise) and its cotangent moves back to x's type; on a mesh of Auto axes it
// is with_sharding_constraint.
Array reshard(const Array& x, const NamedSharding& sharding);
Tensor reshard(const Tensor& x, const NamedSharding& sharding);

namespace detail {

// The non-template part of a jitted function: its cache of compiled signatures.
class JitCore {
 public:
  // Flat inputs in, flat outputs out. `arguments` gives how many flat inputs each argument has
  // (for in_shardings); trace() records the function over flat Tensors and returns its flat
  // outputs and their keys (output structure, kept with the signature).
  using TraceFn =
      std::function<std::vector<Tensor>(std::vector<Tensor>&, std::vector<std::string>&)>;
  explicit JitCore(JitOptions options);
  ~JitCore();
  std::vector<Array> call(std::span<const Array* const> inputs, std::span<const int> arguments,
                          const std::string& structure, const TraceFn& trace,
                          std::vector<std::string>& keys);
  Lowered lower(std::span<const Array* const> inputs, std::span<const int> arguments,
                const std::string& structure, const TraceFn& trace);

  // The fast path of call(), which takes it first. A CachedCall is a compiled program together
  // with the inputs it was called with: their structure, dtypes, shapes and shardings, laid out
  // as the program takes them. cached() finds one whose inputs match `inputs` — the same
  // Sharding objects, or equal NamedShardings or SingleDeviceShardings — without working out a
  // signature or a layout; null when there is none. The most recent 16 are kept. With `wait`
  // false it also answers null at once while another thread holds the cache (tracing a new
  // signature), for a caller holding a lock that trace may need (the Python binding's GIL).
  struct CachedCall;
  std::shared_ptr<const CachedCall> cached(std::span<const Array* const> inputs,
                                           const std::string& structure, bool wait = true) const;
  // Runs `call` on inputs that cached() matched with it; sets `keys` as call() does.
  std::vector<Array> run(const CachedCall& call, std::span<const Array* const> inputs,
                         std::vector<std::string>& keys) const;
  // Names the compiled program a CachedCall runs, for as long as this JitCore lives.
  static const void* program_of(const CachedCall& call);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Argument and result structures: Array <-> Tensor, vectors and string-keyed maps of them.
template <class T>
struct Leaves;

template <>
struct Leaves<Array> {
  using Traced = Tensor;
  static void flatten(const Array& a, std::vector<const Array*>& out, std::string& s) {
    out.push_back(&a);
    s += "a";
  }
  static Tensor unflatten(std::span<Tensor>& in) {
    Tensor t = in.front();
    in = in.subspan(1);
    return t;
  }
};

template <>
struct Leaves<std::vector<Array>> {
  using Traced = std::vector<Tensor>;
  static void flatten(const std::vector<Array>& v, std::vector<const Array*>& out, std::string& s) {
    for (const Array& a : v) out.push_back(&a);
    s += "v" + std::to_string(v.size());
  }
  static std::vector<Tensor> unflatten(std::span<Tensor>& in, size_t n) {
    std::vector<Tensor> v(in.begin(), in.begin() + static_cast<std::ptrdiff_t>(n));
    in = in.subspan(n);
    return v;
  }
};

template <>
struct Leaves<std::map<std::string, Array>> {
  using Traced = std::map<std::string, Tensor>;
  static void flatten(const std::map<std::string, Array>& m, std::vector<const Array*>& out,
                      std::string& s) {
    s += "m{";
    for (const auto& [k, a] : m) {
      out.push_back(&a);
      s += k + ",";
    }
    s += "}";
  }
};

template <>
struct Leaves<Tree<Array>> {
  using Traced = Tree<Tensor>;
  static void flatten(const Tree<Array>& t, std::vector<const Array*>& out, std::string& s) {
    if (t.is_leaf()) {
      out.push_back(&t.leaf());
    } else {
      for (const auto& e : t.entries()) flatten(e.second, out, s);
    }
  }
};

// Results of the traced function, flattened with their keys ("" for a Tensor, the index for a
// vector, the key for a map), and rebuilt from Arrays.
inline void flatten_result(const Tensor& t, std::vector<Tensor>& out, std::vector<std::string>& k) {
  out.push_back(t);
  k.push_back("");
}
inline void flatten_result(const std::vector<Tensor>& v, std::vector<Tensor>& out,
                           std::vector<std::string>& k) {
  for (size_t i = 0; i < v.size(); ++i) {
    out.push_back(v[i]);
    k.push_back(std::to_string(i));
  }
}
inline void flatten_result(const std::map<std::string, Tensor>& m, std::vector<Tensor>& out,
                           std::vector<std::string>& k) {
  for (const auto& [key, t] : m) {
    out.push_back(t);
    k.push_back(key);
  }
}

// A tree's leaves; its structure is the first key.
inline void flatten_result(const Tree<Tensor>& t, std::vector<Tensor>& out,
                           std::vector<std::string>& k) {
  const size_t first = out.size();
  for (const Tensor& leaf : tree_leaves(t)) {
    out.push_back(leaf);
    k.push_back(out.size() - 1 == first ? t.structure() : "");
  }
}

template <class R>
struct Result;
template <>
struct Result<Tensor> {
  using Type = Array;
  static Array build(std::vector<Array>& a, const std::vector<std::string>&) {
    return std::move(a.at(0));
  }
};
template <>
struct Result<std::vector<Tensor>> {
  using Type = std::vector<Array>;
  static std::vector<Array> build(std::vector<Array>& a, const std::vector<std::string>&) {
    return std::move(a);
  }
};
template <>
struct Result<std::map<std::string, Tensor>> {
  using Type = std::map<std::string, Array>;
  static std::map<std::string, Array> build(std::vector<Array>& a,
                                            const std::vector<std::string>& keys) {
    std::map<std::string, Array> m;
    for (size_t i = 0; i < a.size(); ++i) m.emplace(keys[i], std::move(a[i]));
    return m;
  }
};

template <>
struct Result<Tree<Tensor>> {
  using Type = Tree<Array>;
  static Tree<Array> build(std::vector<Array>& a, const std::vector<std::string>& keys) {
    return tree_unflatten(keys.empty() ? std::string("{}") : keys[0], std::move(a));
  }
};

// value_and_grad's (value, gradient) pair: the value first, then the gradient's leaves.
template <class R>
void flatten_result(const std::pair<Tensor, R>& p, std::vector<Tensor>& out,
                    std::vector<std::string>& k) {
  flatten_result(p.first, out, k);
  flatten_result(p.second, out, k);
}

template <class R>
struct Result<std::pair<Tensor, R>> {
  using Type = std::pair<Array, typename Result<R>::Type>;
  static Type build(std::vector<Array>& a, const std::vector<std::string>& keys) {
    Array first = std::move(a.at(0));
    std::vector<Array> rest(std::make_move_iterator(a.begin() + 1),
                            std::make_move_iterator(a.end()));
    const std::vector<std::string> rest_keys(keys.begin() + 1, keys.end());
    return {std::move(first), Result<R>::build(rest, rest_keys)};
  }
};

}  // namespace detail

template <class Fn>
class Jitted {
 public:
  Jitted(Fn fn, JitOptions options)
      : fn_(std::move(fn)), core_(std::make_shared<detail::JitCore>(std::move(options))) {}

  template <class... Args>
  auto operator()(const Args&... args) const {
    using R = std::remove_cvref_t<
        std::invoke_result_t<const Fn&, typename detail::Leaves<Args>::Traced...>>;
    Prepared p = prepare(args...);
    std::vector<std::string> keys;
    std::vector<Array> out =
        core_->call(p.inputs, p.arguments, p.structure, trace_fn<Args...>(args...), keys);
    return detail::Result<R>::build(out, keys);
  }

  // The compiled per-device program for these arguments (traced and cached as a call would).
  template <class... Args>
  Lowered lower(const Args&... args) const {
    Prepared p = prepare(args...);
    return core_->lower(p.inputs, p.arguments, p.structure, trace_fn<Args...>(args...));
  }

 private:
  struct Prepared {
    std::vector<const Array*> inputs;
    std::vector<int> arguments;
    std::string structure;
  };

  template <class... Args>
  static Prepared prepare(const Args&... args) {
    Prepared p;
    auto one = [&](const auto& arg) {
      const size_t before = p.inputs.size();
      using A = std::remove_cvref_t<decltype(arg)>;
      detail::Leaves<A>::flatten(arg, p.inputs, p.structure);
      if constexpr (std::is_same_v<A, Tree<Array>>) p.structure += "t" + arg.structure();
      p.arguments.push_back(static_cast<int>(p.inputs.size() - before));
      p.structure += ";";
    };
    (one(args), ...);
    return p;
  }

  template <class A>
  static auto rebuild(const A& arg, std::span<Tensor>& flat) {
    if constexpr (std::is_same_v<A, Array>) {
      return detail::Leaves<Array>::unflatten(flat);
    } else if constexpr (std::is_same_v<A, std::vector<Array>>) {
      return detail::Leaves<std::vector<Array>>::unflatten(flat, arg.size());
    } else if constexpr (std::is_same_v<A, Tree<Array>>) {
      std::vector<Tensor> leaves(
          flat.begin(), flat.begin() + static_cast<std::ptrdiff_t>(tree_leaves(arg).size()));
      flat = flat.subspan(leaves.size());
      return tree_unflatten(arg.structure(), std::move(leaves));
    } else {
      std::map<std::string, Tensor> m;
      for (const auto& [k, unused] : arg) {
        m.emplace(k, flat.front());
        flat = flat.subspan(1);
      }
      return m;
    }
  }

  template <class... Args>
  detail::JitCore::TraceFn trace_fn(const Args&... args) const {
    return [this, &args...](std::vector<Tensor>& flat, std::vector<std::string>& keys) {
      std::span<Tensor> rest(flat);
      // Braced initialisation evaluates left to right, so the arguments take their leaves in order.
      auto traced = std::tuple<typename detail::Leaves<Args>::Traced...>{rebuild(args, rest)...};
      const auto result = std::apply(fn_, traced);
      std::vector<Tensor> out;
      detail::flatten_result(result, out, keys);
      return out;
    };
  }

  Fn fn_;
  std::shared_ptr<detail::JitCore> core_;
};

// jax.jit: `fn` over Tensors, compiled per signature and partitioned over the inputs' mesh.
template <class Fn>
Jitted<Fn> jit(Fn fn, JitOptions options = {}) {
  return Jitted<Fn>(std::move(fn), std::move(options));
}

}  // namespace spmd
