// spmd::lax::shard_map — per-device code inside a jit-traced function, with JAX's collectives over
// named mesh axes: jax.shard_map used under jax.jit and jax.grad. (spmd::shard_map, shard_map.h,
// is the eager form over Arrays and Blocks; this one records into the trace, so it compiles with
// the rest of the program and is differentiable.)
//
//   auto loss = [&](spmd::Tensor w, spmd::Tensor x, spmd::Tensor y) {
//     return spmd::lax::shard_map(
//         [](spmd::Tensor w, spmd::Tensor x, spmd::Tensor y) {   // this device's blocks
//           return spmd::lax::pmean(jnp::mean(jnp::power(jnp::matmul(x, w) - y, 2)), "dp");
//         },
//         mesh, {P(), P("dp"), P("dp")}, P())(w, x, y);
//   };
//   auto g = spmd::jit(spmd::grad(loss))(w, x, y);               // = the global loss's gradient
//
// shard_map(fn, mesh, in_specs, out_specs[, options]) returns a callable taking one Tensor per
// in_spec (global shapes, from the enclosing trace). Each is laid out as NamedSharding(mesh, its
// spec) and fn receives this device's block of it (the global shape divided by the sizes of the
// axes splitting each dimension). fn returns a Tensor (one out_spec) or a std::vector<Tensor>;
// each result is this device's block of a global result laid out by its out_spec (a single
// out_spec lays out every result, as in shard_map.h's eager form). An out_spec that leaves an
// axis out says the result is the same on every device along it. The mesh must be the jit's.
// ShardMapOptions are JAX's other two arguments:
// - axis_names: the axes fn is manual over (empty: all of the mesh's). Specs and collectives name
//   only these; over the others fn's values are whole, the same on every device (JAX lets its
//   partitioner split them there; spmd computes them replicated: the same values, not the split).
// - check_vma (JAX's default, true): every value of fn is typed by the manual axes it varies
//   over, as JAX 0.10.2 types it:
//   - a block varies over the axes its in_spec splits it by; an operation's result over its
//     operands' union; constants over none;
//   - psum, pmean, pmax and pmin make their result invariant over their axes (an invariant
//     operand first becomes varying: psum of a value the same on every device multiplies it by
//     the number of devices);
//   - all_gather, psum_scatter, ppermute and axis_index give results varying over their axes;
//   - pcast(x, axes, "varying") makes the type varying explicitly (JAX's pvary), and refuses an
//     axis x already varies over.
//   A result varying over an axis its out_spec leaves out throws InvalidArgument when traced,
//   naming the result, the axes and the fix. Autodiff follows the types: where an invariant value
//   meets a varying one (an implicit pvary), its cotangent is summed over the axes it met. So
//   grad, inside fn or around the shard_map, of a loss by a replicated (P()) parameter is summed
//   over the batch axis, as JAX's: `grad(sum(w * x_block))` by w gives Σ over devices, and
//   seed 002's `pmean(grad(loss)(…))` gives that sum again (pmean of an invariant value), not the
//   mean. psum's transpose is the identity; pmean's the identity divided by the group size.
// - check_vma = false: JAX's unchecked semantics, as pmap's (JAX 0.10.2 runs pmap as such a
//   shard_map): no types; a result under an out_spec that leaves an axis out is device 0's along
//   it; grad inside fn is each device's own (no implicit sums), and psum's transpose is a psum.
//   So seed 002's `pmean(grad(loss)(…))` is the mean gradient. Differentiated around the
//   shard_map, as JAX transposes it: the cotangent of a result whose out_spec leaves axes out is
//   divided by their size, and an argument's whose in_spec leaves axes out is summed over them.
//   With axis_names naming only some axes, check_vma = false throws InvalidArgument (not
//   supported).
//
// psum(x, axes), pmean, pmax, pmin, all_gather, psum_scatter, ppermute, axis_index and pcast,
// called inside fn, are JAX's collectives over the named axes (named_collectives.h says what each
// computes; those are the eager Block forms). They throw InvalidArgument outside a lax::shard_map
// function ("unbound axis name") or for an axis the mesh lacks or fn is not manual over. pmax and
// pmin have no derivative, as in JAX.
//
// Inside fn only fn's arguments and values made from them (or constants) may be used: a Tensor
// of the enclosing function captured by fn, a with_sharding_constraint, or a shard_map within a
// shard_map throws InvalidArgument, as does an uneven split or a spec naming an axis the mesh
// lacks.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "spmd/mesh.h"
#include "spmd/mesh_context.h"
#include "spmd/partition_spec.h"
#include "spmd/tensor.h"

namespace spmd::lax {

// JAX's shard_map arguments beyond mesh and specs (see the file comment).
struct ShardMapOptions {
  std::vector<std::string> axis_names;  // empty: every axis of the mesh
  bool check_vma = true;
};

// As the Block forms (named_collectives.h): bool counts in int32; pmean of an integer or bool
// is float32.
Tensor psum(const Tensor& x, const AxisEntry& axes);
Tensor pmean(const Tensor& x, const AxisEntry& axes);
Tensor pmax(const Tensor& x, const AxisEntry& axes);
Tensor pmin(const Tensor& x, const AxisEntry& axes);
// Every device's x along the axes, in axis_index order: stacked along a new dimension `axis`,
// or with `tiled` joined along dimension `axis`.
Tensor all_gather(const Tensor& x, const AxisEntry& axes, int axis = 0, bool tiled = false);
// x summed over the axes, each device keeping its part of dimension `scatter_dimension` (with
// `tiled`, a 1/n slice; without, that dimension's size must be n and is dropped).
Tensor psum_scatter(const Tensor& x, const AxisEntry& axes, int scatter_dimension = 0,
                    bool tiled = false);
// For each (source, target) pair of axis indices, target's result is source's x; others get 0.
Tensor ppermute(const Tensor& x, const AxisEntry& axes,
                const std::vector<std::pair<int, int>>& perm);
// This device's position along the axes (the first major), an int32 scalar.
Tensor axis_index(const AxisEntry& axes);
// JAX's pcast: `to` is "varying" (pvary; the other targets, "reduced" and "unreduced", are
// JAX's explicit-sharding states, which spmd has not, and throw InvalidArgument). x unchanged,
// typed as varying over `axes` too; its cotangent is summed over them. Throws ValueError-like
// InvalidArgument when x already varies over one of them (JAX's "Unsupported pcast"). Under
// check_vma = false, x itself.
Tensor pcast(const Tensor& x, const AxisEntry& axes, const std::string& to);
// The manual axes x varies over (JAX's jax.typeof(x).vma), in mesh order: empty for a value
// invariant over all, or outside a shard_map's function (and under check_vma = false).
std::vector<std::string> varying_axes_of(const Tensor& x);
// True while a lax::shard_map's function is being traced on this thread: where psum and pmean
// may name its mesh's axes (the Python layer raises JAX's NameError elsewhere).
bool in_shard_map_function();

namespace detail {

using Body = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;

// Records `body` run on the blocks of `args` (see the file comment); returns the global results.
// `out_specs` is read after `body` returns (so the body may fill it in).
std::vector<Tensor> traced_shard_map(const Mesh& mesh, const std::vector<PartitionSpec>& in_specs,
                                     const std::vector<PartitionSpec>& out_specs,
                                     const std::vector<Tensor>& args, const Body& body,
                                     const ShardMapOptions& options = {});

inline std::vector<Tensor> as_results(Tensor t) { return {std::move(t)}; }
inline std::vector<Tensor> as_results(std::vector<Tensor> v) { return v; }

template <class Fn, size_t... I>
std::vector<Tensor> call_with(const Fn& fn, const std::vector<Tensor>& blocks,
                              std::index_sequence<I...>) {
  return as_results(fn(blocks[I]...));
}

}  // namespace detail

template <class Fn>
auto shard_map(Fn fn, Mesh mesh, std::vector<PartitionSpec> in_specs,
               std::vector<PartitionSpec> out_specs, ShardMapOptions options = {}) {
  return [fn = std::move(fn), mesh = std::move(mesh), in_specs = std::move(in_specs),
          out_specs = std::move(out_specs), options = std::move(options)](const auto&... args) {
    const detail::Body body = [&fn](const std::vector<Tensor>& blocks) {
      return detail::call_with(fn, blocks, std::make_index_sequence<sizeof...(args)>{});
    };
    return detail::traced_shard_map(mesh, in_specs, out_specs, {Tensor(args)...}, body, options);
  };
}

// One out_spec: the callable returns a Tensor.
template <class Fn>
auto shard_map(Fn fn, Mesh mesh, std::vector<PartitionSpec> in_specs, PartitionSpec out_spec,
               ShardMapOptions options = {}) {
  auto many = lax::shard_map(std::move(fn), std::move(mesh), std::move(in_specs),
                             std::vector<PartitionSpec>{std::move(out_spec)}, std::move(options));
  return [many = std::move(many)](const auto&... args) { return many(args...).front(); };
}

// With the mesh left out: the mesh in scope (mesh_context.h), taken now; InvalidArgument when
// none is.
template <class Fn>
auto shard_map(Fn fn, std::vector<PartitionSpec> in_specs, std::vector<PartitionSpec> out_specs,
               ShardMapOptions options = {}) {
  return lax::shard_map(std::move(fn), mesh_in_scope("lax::shard_map without a mesh"),
                        std::move(in_specs), std::move(out_specs), std::move(options));
}
template <class Fn>
auto shard_map(Fn fn, std::vector<PartitionSpec> in_specs, PartitionSpec out_spec,
               ShardMapOptions options = {}) {
  return lax::shard_map(std::move(fn), mesh_in_scope("lax::shard_map without a mesh"),
                        std::move(in_specs), std::move(out_spec), std::move(options));
}

}  // namespace spmd::lax
