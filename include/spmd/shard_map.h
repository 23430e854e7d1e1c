// spmd::shard_map and spmd::pmap — per-device computation over global arrays, with the named-axis
// collectives of named_collectives.h inside (jax.shard_map, jax.pmap).
//
//   auto step = spmd::shard_map([](spmd::Block b) { return spmd::psum(b, "devices"); },
//                               mesh, {spmd::P("devices")}, spmd::P());
//   spmd::Array total = step(x);
//
// shard_map(fn, mesh, in_specs, out_specs) returns a callable taking one spmd::Array per entry
// of in_specs. Each input is laid out as NamedSharding(mesh, in_spec) (resharded with
// device_put when it is laid out otherwise), and fn runs once per mesh device of this process,
// concurrently, each on its own thread, taking that device's blocks (Block views of the shards,
// valid during the call) and returning its blocks: a Block, or a std::vector<Block> for several
// outputs. out_specs gives each output's layout (one spec applies to every output); each output's
// global shape is its block shape times the number of devices along the axes its spec names,
// dimension by dimension. Every device must return the same number of blocks, each with the same
// shape and dtype on every device of the mesh — checked, and InvalidArgument in every process
// naming two devices that differ. Processes that ran different shard_map calls (another
// function, or other specs) whose collectives happened to line up get CollectiveMismatch.
//
// An output spec that leaves a mesh axis out says the blocks are equal along it (replicated).
// With ShardMapOptions::check_rep (the default, as JAX's check_rep) that is checked too — by
// comparing a 64-bit hash of every such block along the axes it leaves out, in the same small
// collective as the shape check — and a difference throws InvalidArgument in every process
// naming two devices whose blocks differ; turn it off for blocks equal only up to rounding that
// the caller accepts.
//
// Like every collective, a call is made by every process owning devices of the mesh, in the same
// order with the same specs (a process owning none gets InvalidArgument). When fn throws on a
// device, the other devices of this process stop at their next collective (FailedPrecondition),
// and the call rethrows the first exception; the other processes see this process stop taking
// part (their collectives fail when it exits, or after SPMD_COLLECTIVE_TIMEOUT). Calling
// shard_map or pmap from inside fn throws InvalidArgument.
//
// Thread safety: a ShardMapped / Pmapped object may be called from several threads; the calls
// take turns.
#pragma once

#include <concepts>
#include <cstddef>
#include <functional>
#include <span>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

#include "spmd/array.h"
#include "spmd/block.h"
#include "spmd/host_array.h"
#include "spmd/mesh.h"
#include "spmd/mesh_context.h"
#include "spmd/named_collectives.h"
#include "spmd/partition_spec.h"

namespace spmd {

struct ShardMapOptions {
  // Check that outputs are equal along the mesh axes their out_specs leave out (JAX's check_rep).
  // Costs one 64-bit hash over each such block per call.
  bool check_rep = true;
};

namespace detail {

// One device's call of the user's function: its input blocks in, its output blocks out.
using BlockFunction = std::function<std::vector<Block>(std::vector<Block>&)>;

// `program` names the user's function (its type), so that processes running different
// shard_maps whose collectives happen to line up are told so instead of returning garbage.
// An uneven split is an IndivisibleError.
std::vector<Array> run_shard_map(const Mesh& mesh, const std::vector<PartitionSpec>& in_specs,
                                 const std::vector<PartitionSpec>& out_specs,
                                 const ShardMapOptions& options, const char* program,
                                 std::span<const Array* const> inputs, const BlockFunction& fn);

std::vector<HostArray> run_pmap(const std::string& axis_name, const char* program,
                                std::span<const HostArray* const> inputs, const BlockFunction& fn);

template <class R>
std::vector<Block> to_blocks(R&& result) {
  if constexpr (std::is_same_v<std::remove_cvref_t<R>, Block>) {
    std::vector<Block> out;
    out.push_back(std::forward<R>(result));
    return out;
  } else {
    static_assert(std::is_same_v<std::remove_cvref_t<R>, std::vector<Block>>,
                  "the function must return a spmd::Block or a std::vector<spmd::Block>");
    return std::vector<Block>(std::forward<R>(result));
  }
}

template <class>
using BlockFor = Block;

// Calls fn with the blocks as separate arguments.
template <class Fn, size_t... I>
std::vector<Block> call_with_blocks(const Fn& fn, std::vector<Block>& blocks,
                                    std::index_sequence<I...>) {
  return to_blocks(std::invoke(fn, std::move(blocks[I])...));
}

// The function's result type for `N` blocks, and whether it is a single Block.
template <class Fn, class... Args>
inline constexpr bool returns_one_block =
    std::is_same_v<std::remove_cvref_t<std::invoke_result_t<const Fn&, BlockFor<Args>...>>, Block>;

}  // namespace detail

template <class Fn>
class ShardMapped {
 public:
  ShardMapped(Fn fn, Mesh mesh, std::vector<PartitionSpec> in_specs,
              std::vector<PartitionSpec> out_specs, ShardMapOptions options)
      : fn_(std::move(fn)),
        mesh_(std::move(mesh)),
        in_specs_(std::move(in_specs)),
        out_specs_(std::move(out_specs)),
        options_(options) {}

  // Runs the function over `xs` (one per in_spec): an Array for a function returning a Block,
  // a std::vector<Array> for one returning a std::vector<Block>.
  template <class... Arrays>
  requires(std::same_as<std::remove_cvref_t<Arrays>, Array>&&...) auto operator()(
      const Arrays&... xs) const {
    const std::vector<const Array*> inputs{&xs...};
    const detail::BlockFunction body = [this](std::vector<Block>& blocks) {
      return detail::call_with_blocks(fn_, blocks, std::index_sequence_for<Arrays...>{});
    };
    auto outputs = detail::run_shard_map(mesh_, in_specs_, out_specs_, options_, typeid(Fn).name(),
                                         inputs, body);
    if constexpr (detail::returns_one_block<Fn, Arrays...>) {
      return std::move(outputs.at(0));
    } else {
      return outputs;
    }
  }

  const Mesh& mesh() const { return mesh_; }

 private:
  Fn fn_;
  Mesh mesh_;
  std::vector<PartitionSpec> in_specs_;
  std::vector<PartitionSpec> out_specs_;
  ShardMapOptions options_;
};

// Maps `fn` over the blocks of `mesh` (see the file comment). Throws InvalidArgument, when
// called, for a spec naming an axis the mesh lacks, an input count differing from in_specs, or
// output blocks that do not fit out_specs.
template <class Fn>
ShardMapped<std::decay_t<Fn>> shard_map(Fn&& fn, Mesh mesh, std::vector<PartitionSpec> in_specs,
                                        std::vector<PartitionSpec> out_specs,
                                        ShardMapOptions options = {}) {
  return ShardMapped<std::decay_t<Fn>>(std::forward<Fn>(fn), std::move(mesh), std::move(in_specs),
                                       std::move(out_specs), options);
}
template <class Fn>
ShardMapped<std::decay_t<Fn>> shard_map(Fn&& fn, Mesh mesh, std::vector<PartitionSpec> in_specs,
                                        PartitionSpec out_spec, ShardMapOptions options = {}) {
  return shard_map(std::forward<Fn>(fn), std::move(mesh), std::move(in_specs),
                   std::vector<PartitionSpec>{std::move(out_spec)}, options);
}

// jax.shard_map with the mesh left out: the mesh in scope (mesh_context.h), taken now. Throws
// InvalidArgument when none is.
template <class Fn>
ShardMapped<std::decay_t<Fn>> shard_map(Fn&& fn, std::vector<PartitionSpec> in_specs,
                                        std::vector<PartitionSpec> out_specs,
                                        ShardMapOptions options = {}) {
  return shard_map(std::forward<Fn>(fn), mesh_in_scope("shard_map without a mesh"),
                   std::move(in_specs), std::move(out_specs), options);
}
template <class Fn>
ShardMapped<std::decay_t<Fn>> shard_map(Fn&& fn, std::vector<PartitionSpec> in_specs,
                                        PartitionSpec out_spec, ShardMapOptions options = {}) {
  return shard_map(std::forward<Fn>(fn), mesh_in_scope("shard_map without a mesh"),
                   std::move(in_specs), std::move(out_spec), options);
}

template <class Fn>
class Pmapped {
 public:
  Pmapped(Fn fn, std::string axis_name) : fn_(std::move(fn)), axis_name_(std::move(axis_name)) {}

  // Runs the function once per local device i on xs[i]... (each x's leading dimension must be
  // local_device_count(); the function sees the rest) and stacks the results along a new leading
  // dimension: a HostArray for a function returning a Block, a std::vector<HostArray> for one
  // returning a std::vector<Block>.
  template <class... Hosts>
  requires(std::same_as<std::remove_cvref_t<Hosts>, HostArray>&&...) auto operator()(
      const Hosts&... xs) const {
    const std::vector<const HostArray*> inputs{&xs...};
    const detail::BlockFunction body = [this](std::vector<Block>& blocks) {
      return detail::call_with_blocks(fn_, blocks, std::index_sequence_for<Hosts...>{});
    };
    auto outputs = detail::run_pmap(axis_name_, typeid(Fn).name(), inputs, body);
    if constexpr (detail::returns_one_block<Fn, Hosts...>) {
      return std::move(outputs.at(0));
    } else {
      return outputs;
    }
  }

 private:
  Fn fn_;
  std::string axis_name_;
};

// jax.pmap(fn, axis_name): `fn` runs on every local device of every process — every process
// calls the result with its local_device_count() values — and collectives over `axis_name` span
// all devices of all processes, in global device order:
//   auto count = spmd::pmap([](spmd::Block x) { return spmd::psum(x, "i"); }, "i");
//   count(ones)  // every entry: device_count()
// A shard_map over the 1-D mesh of spmd::devices() named `axis_name`, with the same contract.
template <class Fn>
Pmapped<std::decay_t<Fn>> pmap(Fn&& fn, std::string axis_name) {
  return Pmapped<std::decay_t<Fn>>(std::forward<Fn>(fn), std::move(axis_name));
}

}  // namespace spmd
