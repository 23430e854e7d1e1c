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

// This process's mesh devices, by flat mesh position; InvalidArgument when it owns none.
std::vector<int64_t> my_positions(const Mesh& mesh) {
  const int me = process_index();
  std::vector<int64_t> positions;
  for (int64_t f = 0; f < mesh.size(); ++f) {
    if (mesh.devices()[f].process_index() == me) positions.push_back(f);
  }
  if (positions.empty()) {
    throw InvalidArgument(fmt::format(
        "shard_map: process {} owns no device of {}; only the processes owning mesh devices call "
        "it",
        me, mesh.to_string()));
  }
  return positions;
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

// The call's identity: the function and every spec, compared across the mesh afterwards.
uint64_t call_identity(const char* program, const std::vector<PartitionSpec>& in_specs,
                       const std::vector<PartitionSpec>& out_specs) {
  std::string identity = program;
  for (const auto& spec : in_specs) identity += "|" + spec.to_string();
  identity += "|->";
  for (const auto& spec : out_specs) identity += "|" + spec.to_string();
  return XXH3_64bits(identity.data(), identity.size());
}

}  // namespace

namespace detail {

std::vector<Array> run_shard_map(const Mesh& mesh, const std::vector<PartitionSpec>& in_specs,
                                 const std::vector<PartitionSpec>& out_specs,
                                 const ShardMapOptions& options, const char* program,
                                 std::span<const Array* const> inputs, const BlockFunction& fn,
                                 const PaddedBlocks* padded) {
  check_call(inputs, in_specs, out_specs, mesh);
  const std::vector<int64_t> positions = my_positions(mesh);
  std::vector<Array> resharded;
  std::vector<HostArray> padding;
  padding.reserve(inputs.size() * positions.size());  // the blocks view its elements
  std::vector<std::vector<Block>> blocks =
      input_blocks(mesh, in_specs, inputs, positions, resharded, padded ? &padding : nullptr);
  const uint64_t call = call_identity(program, in_specs, out_specs);

  // fn on every device of this process, each on its own thread. The first failure closes the
  // process's groups, so that devices waiting for the failed one in a collective are released.
  const auto groups = axis_groups_for(mesh);
  std::vector<std::vector<Block>> results(positions.size());
  std::mutex error_mu;
  std::exception_ptr first_error;
  std::vector<std::function<void()>> jobs;
  for (size_t i = 0; i < positions.size(); ++i) {
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
          groups->close(fmt::format("device {} of process {} failed in the shard_map function: {}",
                                    id, process_index(), exception_message(first_error)));
        }
      }
    });
  }
  device_workers()->run(jobs);
  if (first_error) {
    groups->reopen();  // every device is done with the failed call
    std::rethrow_exception(first_error);
  }
  return assemble_outputs(mesh, out_specs, positions, results,
                          padded ? &padded->out_shapes : nullptr);
}

}  // namespace detail
}  // namespace spmd
