// shard_map: inputs laid out over the mesh, the function run on every local mesh device's
// thread, its blocks checked across the mesh and assembled into global arrays.
#include "spmd/shard_map.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <xxhash.h>

#include <exception>
#include <mutex>

#include "compute/axis_context.h"
#include "compute/device_workers.h"
#include "compute/output_check.h"
#include "runtime/exception_message.h"
#include "spmd/error.h"
#include "spmd/runtime.h"

namespace spmd {
namespace {

bool same_layout(const Array& x, const Sharding& target) {
  if (x.sharding().num_devices() != target.num_devices()) return false;
  const auto have = x.sharding().devices_indices_map(x.shape());
  const auto want = target.devices_indices_map(x.shape());
  for (size_t i = 0; i < have.size(); ++i) {
    if (!(have[i].device == want[i].device) || !(have[i].index == want[i].index)) return false;
  }
  return true;
}

// Views of `x`'s shard on device `id`.
Block block_of(const Array& x, int id, size_t input) {
  for (const auto& shard : x.addressable_shards()) {
    if (shard.device.id() == id) {
      return Block::view(x.dtype(), shard.data.shape(), shard.data.bytes().data());
    }
  }
  throw InvalidArgument(fmt::format("shard_map: input {} has no shard on device {}", input, id));
}

}  // namespace

namespace detail {

std::vector<Array> run_shard_map(const Mesh& mesh, const std::vector<PartitionSpec>& in_specs,
                                 const std::vector<PartitionSpec>& out_specs,
                                 const ShardMapOptions& options, const char* program,
                                 std::span<const Array* const> inputs, const BlockFunction& fn) {
  if (in_axis_context()) {
    throw InvalidArgument(
        "shard_map/pmap: called inside the function of another shard_map or pmap; nesting is "
        "not supported: use the named-axis collectives of the outer mesh instead");
  }
  if (inputs.size() != in_specs.size()) {
    throw InvalidArgument(
        fmt::format("shard_map: {} arguments for {} in_specs", inputs.size(), in_specs.size()));
  }
  if (out_specs.empty()) {
    throw InvalidArgument(
        "shard_map: out_specs is empty; give one spec per output, or one for all");
  }
  const int me = process_index();
  std::vector<int64_t> positions;  // this process's mesh devices, by flat mesh position
  for (int64_t f = 0; f < mesh.size(); ++f) {
    if (mesh.devices()[f].process_index() == me) positions.push_back(f);
  }
  if (positions.empty()) {
    throw InvalidArgument(fmt::format(
        "shard_map: process {} owns no device of {}; only the processes owning mesh devices call "
        "it",
        me, mesh.to_string()));
  }
  for (const auto& spec : out_specs) NamedSharding(mesh, spec);  // names only the mesh's axes

  // Inputs in the layout in_specs asks for.
  std::vector<Array> resharded;
  resharded.reserve(inputs.size());
  std::vector<const Array*> laid(inputs.begin(), inputs.end());
  for (size_t k = 0; k < inputs.size(); ++k) {
    if (in_specs[k].size() > inputs[k]->shape().size()) {
      throw InvalidArgument(fmt::format(
          "shard_map: in_specs[{}] {} has {} entries, more than argument {}'s rank {}", k,
          in_specs[k].to_string(), in_specs[k].size(), k, inputs[k]->shape().size()));
    }
    const NamedSharding target(mesh, in_specs[k]);
    target.shard_shape(inputs[k]->shape());  // IndivisibleError naming the dimension
    if (!same_layout(*inputs[k], target)) {
      resharded.push_back(device_put(*inputs[k], target));
      laid[k] = &resharded.back();
    }
  }

  const size_t local = positions.size();
  std::vector<std::vector<Block>> blocks(local);
  for (size_t i = 0; i < local; ++i) {
    const int id = mesh.devices()[positions[i]].id();
    for (size_t k = 0; k < laid.size(); ++k) blocks[i].push_back(block_of(*laid[k], id, k));
  }

  // The call's identity: the function and every spec, compared across the mesh afterwards.
  std::string identity = program;
  for (const auto& spec : in_specs) identity += "|" + spec.to_string();
  identity += "|->";
  for (const auto& spec : out_specs) identity += "|" + spec.to_string();
  const uint64_t call = XXH3_64bits(identity.data(), identity.size());

  const auto groups = axis_groups_for(mesh);
  std::vector<std::vector<Block>> results(local);
  std::mutex error_mu;
  std::exception_ptr first_error;
  std::vector<std::function<void()>> jobs;
  for (size_t i = 0; i < local; ++i) {
    jobs.emplace_back([&, i] {
      const int id = mesh.devices()[positions[i]].id();
      const AxisContext context{groups.get(), id, mesh.coordinates(positions[i])};
      try {
        const AxisContextScope scope(context);
        results[i] = fn(blocks[i]);
        check_outputs(context, call, out_specs, options, results[i]);
      } catch (...) {
        std::lock_guard lock(error_mu);
        if (!first_error) {
          first_error = std::current_exception();
          // Release this process's devices waiting for this one in a collective.
          groups->close(fmt::format("device {} of process {} failed in the shard_map function: {}",
                                    id, me, exception_message(first_error)));
        }
      }
    });
  }
  device_workers()->run(jobs);
  if (first_error) std::rethrow_exception(first_error);
  return assemble_outputs(mesh, out_specs, positions, results);
}

}  // namespace detail
}  // namespace spmd
