// shard_map: inputs laid out over the mesh, the function run on every local mesh device's
// thread, its blocks checked across the mesh and assembled into global arrays.
#include "spmd/shard_map.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "compute/axis_context.h"
#include "compute/device_run.h"
#include "compute/output_check.h"
#include "spmd/error.h"
#include "spmd/runtime.h"

namespace spmd {
namespace {

// The argument checks that need no collective: not nested, one spec per argument, at least one
// output spec, every spec naming the mesh's axes only.
void check_call(std::span<const Array* const> inputs, const std::vector<PartitionSpec>& in_specs,
                const std::vector<PartitionSpec>& out_specs, const Mesh& mesh) {
  if (in_axis_context()) {
    throw InvalidArgument(
        "shard_map/pmap: called inside the function of another shard_map or pmap (or in a host "
        "callback such as jax.debug.callback, on the device's thread); nesting is not "
        "supported: use the named-axis collectives of the outer mesh instead, or NumPy on the "
        "callback's values");
  }
  if (inputs.size() != in_specs.size()) {
    throw InvalidArgument(
        fmt::format("shard_map: {} arguments for {} in_specs", inputs.size(), in_specs.size()));
  }
  if (out_specs.empty()) {
    throw InvalidArgument(
        "shard_map: out_specs is empty; give one spec per output, or one for all");
  }
  for (const auto& spec : out_specs) NamedSharding(mesh, spec);  // names only the mesh's axes
}

// Each device's input blocks, inputs first laid out as in_specs asks (device_put where they are
// not); `resharded` keeps the new arrays the blocks view. An uneven split is an IndivisibleError.
std::vector<std::vector<Block>> input_blocks(const Mesh& mesh,
                                             const std::vector<PartitionSpec>& in_specs,
                                             std::span<const Array* const> inputs,
                                             const std::vector<int64_t>& positions,
                                             std::vector<Array>& resharded) {
  resharded.reserve(inputs.size());
  std::vector<const Array*> laid(inputs.begin(), inputs.end());
  for (size_t k = 0; k < inputs.size(); ++k) {
    if (in_specs[k].size() > inputs[k]->shape().size()) {
      throw InvalidArgument(fmt::format(
          "shard_map: in_specs[{}] {} has {} entries, more than argument {}'s rank {}", k,
          in_specs[k].to_string(), in_specs[k].size(), k, inputs[k]->shape().size()));
    }
    const NamedSharding target(mesh, in_specs[k]);
    target.shard_shape(inputs[k]->shape());  // IndivisibleError for an uneven split
    if (!same_layout(*inputs[k], target)) {
      resharded.push_back(device_put(*inputs[k], target));
      laid[k] = &resharded.back();
    }
  }
  std::vector<std::vector<Block>> blocks(positions.size());
  for (size_t i = 0; i < positions.size(); ++i) {
    const int id = mesh.devices()[positions[i]].id();
    for (size_t k = 0; k < laid.size(); ++k) blocks[i].push_back(block_of(*laid[k], id, k));
  }
  return blocks;
}

}  // namespace

namespace detail {

std::vector<Array> run_shard_map(const Mesh& mesh, const std::vector<PartitionSpec>& in_specs,
                                 const std::vector<PartitionSpec>& out_specs,
                                 const ShardMapOptions& options, const char* program,
                                 std::span<const Array* const> inputs, const BlockFunction& fn) {
  check_call(inputs, in_specs, out_specs, mesh);
  const LocalMeshDevices local = local_mesh_devices(mesh);
  std::vector<Array> resharded;
  std::vector<std::vector<Block>> blocks =
      input_blocks(mesh, in_specs, inputs, local.positions, resharded);
  std::vector<std::vector<Block>> results =
      run_on_devices(*axis_groups_for(mesh), local, call_identity(program, in_specs, out_specs),
                     out_specs, options, blocks, fn);
  return assemble_outputs(mesh, out_specs, local.positions, results);
}

}  // namespace detail
}  // namespace spmd
