// spmd::lax::shard_map — per-device code inside a jit-traced function, with psum and pmean over
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
// shard_map(fn, mesh, in_specs, out_specs) returns a callable taking one Tensor per in_spec
// (global shapes, from the enclosing trace). Each is laid out as NamedSharding(mesh, its spec)
// and fn receives this device's block of it (the global shape divided by the sizes of the axes
// splitting each dimension). fn returns a Tensor (one out_spec) or a std::vector<Tensor>; each
// result is this device's block of a global result laid out by its out_spec (a single out_spec
// lays out every result, as in shard_map.h's eager form). An out_spec that
// leaves an axis out says the result is the same on every device along it (checked, see below).
// The mesh must be the jit's mesh.
//
// psum(x, axes) and pmean(x, axes), called inside fn, sum (average) x over the devices along
// the named axes; pmean of an integer x is floating, as JAX's. They throw InvalidArgument outside
// a lax::shard_map function or for an axis the mesh lacks.
//
// Differentiating a function that calls shard_map follows JAX (its "varying manual axes"): a
// block varies over the axes its spec splits it by, an operation's result over its operands'
// axes, and psum's result no longer over the summed ones. psum's transpose is the identity,
// pmean's the identity divided by the group size, and where a block that does not vary over an
// axis meets one that does, its cotangent is summed over that axis. So grad of a pmean'ed
// per-device loss is the gradient of the global mean — summed over the batch axis only, not over
// an axis the loss does not vary along. A result whose value varies over an axis its out_spec
// leaves out throws InvalidArgument when traced (JAX's check_vma).
//
// grad called inside fn differentiates the device's own function: the gradients of its blocks,
// per device, with no sum (as under pmap). So seed 002's explicit form,
// `grads = grad(loss)(params, x, y); pmean(g, 'devices')` for each g, gives the mean gradient.
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

// As the Block forms (named_collectives.h): bool counts in int32; pmean of an integer or bool
// is float32.
Tensor psum(const Tensor& x, const AxisEntry& axes);
Tensor pmean(const Tensor& x, const AxisEntry& axes);
// True while a lax::shard_map's function is being traced on this thread: where psum and pmean
// may name its mesh's axes (the Python layer raises JAX's NameError elsewhere).
bool in_shard_map_function();

namespace detail {

using Body = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;

// Records `body` run on the blocks of `args` (see the file comment); returns the global results.
std::vector<Tensor> traced_shard_map(const Mesh& mesh, const std::vector<PartitionSpec>& in_specs,
                                     const std::vector<PartitionSpec>& out_specs,
                                     const std::vector<Tensor>& args, const Body& body);

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
               std::vector<PartitionSpec> out_specs) {
  return [fn = std::move(fn), mesh = std::move(mesh), in_specs = std::move(in_specs),
          out_specs = std::move(out_specs)](const auto&... args) {
    const detail::Body body = [&fn](const std::vector<Tensor>& blocks) {
      return detail::call_with(fn, blocks, std::make_index_sequence<sizeof...(args)>{});
    };
    return detail::traced_shard_map(mesh, in_specs, out_specs, {Tensor(args)...}, body);
  };
}

// One out_spec: the callable returns a Tensor.
template <class Fn>
auto shard_map(Fn fn, Mesh mesh, std::vector<PartitionSpec> in_specs, PartitionSpec out_spec) {
  auto many = lax::shard_map(std::move(fn), std::move(mesh), std::move(in_specs),
                             std::vector<PartitionSpec>{std::move(out_spec)});
  return [many = std::move(many)](const auto&... args) { return many(args...).front(); };
}

// With the mesh left out: the mesh in scope (mesh_context.h), taken now; InvalidArgument when
// none is.
template <class Fn>
auto shard_map(Fn fn, std::vector<PartitionSpec> in_specs, std::vector<PartitionSpec> out_specs) {
  return lax::shard_map(std::move(fn), mesh_in_scope("lax::shard_map without a mesh"),
                        std::move(in_specs), std::move(out_specs));
}
template <class Fn>
auto shard_map(Fn fn, std::vector<PartitionSpec> in_specs, PartitionSpec out_spec) {
  return lax::shard_map(std::move(fn), mesh_in_scope("lax::shard_map without a mesh"),
                        std::move(in_specs), std::move(out_spec));
}

}  // namespace spmd::lax
