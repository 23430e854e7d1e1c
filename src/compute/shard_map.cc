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
  for (const auto& spec : out_specs) NamedSharding(mesh, spec);  // names only the mesh's axes
}

// The block every device holds of `global` under `sharding`: ceil(size / parts) per dimension.
Shape padded_block_shape(const NamedSharding& sharding, const Shape& global) {
  const std::vector<int64_t> parts = sharding.shard_counts(global.size());
  Shape out = global;
  for (size_t d = 0; d < out.size(); ++d) out[d] = (global[d] + parts[d] - 1) / parts[d];
  return out;
}

// `block` (a view of a shard) with zeros after it up to `shape`, kept in `storage`.
Block padded_to(const Block& block, const Shape& shape, std::vector<HostArray>& storage) {
  if (block.shape() == shape) return block;
  HostArray full = HostArray::zeros(block.dtype(), shape);
  Index part;
  for (int64_t n : block.shape()) part.push_back({0, n});
  full.assign(part, block.to_host());
  storage.push_back(std::move(full));
  return Block::view(block.dtype(), shape, storage.back().bytes().data());
}

// Each device's input blocks, inputs first laid out as in_specs asks (device_put where they are
// not); `resharded` keeps the new arrays the blocks view, `padding` jit's padded blocks (null:
// an uneven split is an IndivisibleError).
std::vector<std::vector<Block>> input_blocks(const Mesh& mesh,
                                             const std::vector<PartitionSpec>& in_specs,
                                             std::span<const Array* const> inputs,
                                             const std::vector<int64_t>& positions,
                                             std::vector<Array>& resharded,
                                             std::vector<HostArray>* padding) {
  resharded.reserve(inputs.size());
  std::vector<const Array*> laid(inputs.begin(), inputs.end());
  std::vector<Shape> block_shapes;  // every device's, padded or (IndivisibleError) even
  for (size_t k = 0; k < inputs.size(); ++k) {
    if (in_specs[k].size() > inputs[k]->shape().size()) {
      throw InvalidArgument(fmt::format(
          "shard_map: in_specs[{}] {} has {} entries, more than argument {}'s rank {}", k,
          in_specs[k].to_string(), in_specs[k].size(), k, inputs[k]->shape().size()));
    }
    const NamedSharding target(mesh, in_specs[k]);
    block_shapes.push_back(padding ? padded_block_shape(target, inputs[k]->shape())
                                   : target.shard_shape(inputs[k]->shape()));
    if (!same_layout(*inputs[k], target)) {
      resharded.push_back(device_put(*inputs[k], target));
      laid[k] = &resharded.back();
    }
  }
  std::vector<std::vector<Block>> blocks(positions.size());
  for (size_t i = 0; i < positions.size(); ++i) {
    const int id = mesh.devices()[positions[i]].id();
    for (size_t k = 0; k < laid.size(); ++k) {
      Block b = block_of(*laid[k], id, k);
      if (padding != nullptr) b = padded_to(b, block_shapes[k], *padding);
      blocks[i].push_back(std::move(b));
    }
  }
  return blocks;
}

}  // namespace

namespace detail {

std::vector<Array> run_shard_map(const Mesh& mesh, const std::vector<PartitionSpec>& in_specs,
                                 const std::vector<PartitionSpec>& out_specs,
                                 const ShardMapOptions& options, const char* program,
                                 std::span<const Array* const> inputs, const BlockFunction& fn,
                                 const PaddedBlocks* padded) {
  check_call(inputs, in_specs, out_specs, mesh);
  const LocalMeshDevices local = local_mesh_devices(mesh);
  std::vector<Array> resharded;
  std::vector<HostArray> padding;
  padding.reserve(inputs.size() * local.positions.size());  // the blocks view its elements
  std::vector<std::vector<Block>> blocks =
      input_blocks(mesh, in_specs, inputs, local.positions, resharded, padded ? &padding : nullptr);
  std::vector<std::vector<Block>> results =
      run_on_devices(*axis_groups_for(mesh), local, call_identity(program, in_specs, out_specs),
                     out_specs, options, blocks, fn);
  return assemble_outputs(mesh, out_specs, local.positions, results,
                          padded ? &padded->out_shapes : nullptr);
}

}  // namespace detail
}  // namespace spmd
