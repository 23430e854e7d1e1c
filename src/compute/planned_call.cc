#include "compute/planned_call.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "compute/axis_groups.h"
#include "compute/device_run.h"
#include "spmd/error.h"
#include "spmd/runtime.h"
#include "spmd/sharding.h"

namespace spmd::detail {

struct PlannedCall::Session {
  std::weak_ptr<AxisGroups> groups;  // the session's own: expires when it shuts down
  LocalMeshDevices local;
  int process_index = 0;
  std::vector<std::vector<DeviceIndex>> places;  // [output][local device]
};

namespace {

bool splits_evenly(const Sharding& sharding, const Shape& shape) {
  const std::vector<int64_t> parts = sharding.shard_counts(shape.size());
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] % parts[d] != 0) return false;
  }
  return true;
}

}  // namespace

PlannedCall::PlannedCall(Mesh mesh, std::vector<PartitionSpec> in_specs,
                         std::vector<PartitionSpec> out_specs, uint64_t call,
                         std::vector<Output> outputs)
    : mesh_(std::move(mesh)),
      in_specs_(std::move(in_specs)),
      out_specs_(std::move(out_specs)),
      call_(call),
      outputs_(std::move(outputs)) {}

std::shared_ptr<const PlannedCall> PlannedCall::make(Mesh mesh, std::vector<PartitionSpec> in_specs,
                                                     std::vector<PartitionSpec> out_specs,
                                                     const std::string& program,
                                                     std::vector<Shape> out_shapes,
                                                     const std::vector<DType>& out_dtypes) {
  std::vector<Output> outputs;
  std::vector<PartitionSpec> specs;
  for (size_t k = 0; k < out_shapes.size(); ++k) {
    const PartitionSpec& spec = out_specs.size() == 1 ? out_specs[0] : out_specs.at(k);
    auto sharding = std::make_shared<const NamedSharding>(mesh, spec);
    if (!splits_evenly(*sharding, out_shapes[k])) return nullptr;
    Shape block = sharding->shard_shape(out_shapes[k]);
    outputs.push_back(
        {std::move(out_shapes[k]), std::move(block), out_dtypes.at(k), std::move(sharding)});
    specs.push_back(spec);
  }
  const uint64_t call = call_identity(program.c_str(), in_specs, out_specs);
  return std::shared_ptr<const PlannedCall>(new PlannedCall(
      std::move(mesh), std::move(in_specs), std::move(specs), call, std::move(outputs)));
}

bool PlannedCall::takes(std::span<const Array* const> inputs) const {
  if (inputs.size() != in_specs_.size()) return false;
  for (size_t k = 0; k < inputs.size(); ++k) {
    if (in_specs_[k].size() > inputs[k]->shape().size()) return false;
    const NamedSharding target(mesh_, in_specs_[k]);
    if (!splits_evenly(target, inputs[k]->shape()) || !same_layout(*inputs[k], target)) {
      return false;
    }
  }
  return true;
}

std::shared_ptr<const PlannedCall::Session> PlannedCall::session() const {
  std::lock_guard lock(mu_);
  if (session_ && !session_->groups.expired()) return session_;
  auto s = std::make_shared<Session>();
  s->groups = axis_groups_for(mesh_);
  s->local = local_mesh_devices(mesh_);
  s->process_index = process_index();
  for (const Output& out : outputs_) {
    std::vector<DeviceIndex> map = out.sharding->devices_indices_map(out.shape);
    auto& places = s->places.emplace_back();
    for (int64_t p : s->local.positions) places.push_back(std::move(map[static_cast<size_t>(p)]));
  }
  session_ = std::move(s);
  return session_;
}

std::vector<Array> PlannedCall::run(std::span<const Array* const> inputs,
                                    const BlockFunction& fn) const {
  const std::shared_ptr<const Session> s = session();
  const std::shared_ptr<AxisGroups> groups = s->groups.lock();
  if (!groups) {
    throw FailedPrecondition("jit: the runtime shut down while a call was starting");
  }
  const size_t devices = s->local.ids.size();
  std::vector<std::vector<Block>> blocks(devices);
  for (size_t i = 0; i < devices; ++i) {
    blocks[i].reserve(inputs.size());
    for (size_t k = 0; k < inputs.size(); ++k) {
      blocks[i].push_back(block_of(*inputs[k], s->local.ids[i], k));
    }
  }
  std::vector<std::vector<Block>> results =
      run_on_devices(*groups, s->local, call_, out_specs_, {.check_rep = false}, blocks, fn);
  std::vector<Array> arrays;
  arrays.reserve(outputs_.size());
  for (size_t k = 0; k < outputs_.size(); ++k) {
    const Output& out = outputs_[k];
    std::vector<Shard> shards;
    shards.reserve(devices);
    for (size_t i = 0; i < devices; ++i) {
      const DeviceIndex& place = s->places[k][i];
      if (results[i].size() != outputs_.size()) {
        throw Error(fmt::format("jit: device {} returned {} blocks; the program promised {}",
                                s->local.ids[i], results[i].size(), outputs_.size()));
      }
      const Block& b = results[i][k];
      if (b.dtype() != out.dtype || b.shape() != out.block) {
        throw Error(
            fmt::format("jit: device {} returned {}[{}] as output {}; the program promised {}[{}]",
                        s->local.ids[i], dtype_name(b.dtype()), fmt::join(b.shape(), ", "), k,
                        dtype_name(out.dtype), fmt::join(out.block, ", ")));
      }
      shards.push_back(
          Shard{place.device, place.index, place.replica_id, std::move(results[i][k]).to_host()});
    }
    arrays.emplace_back(out.shape, out.dtype, out.sharding, std::move(shards), s->process_index,
                        Array::Unchecked{});
  }
  return arrays;
}

}  // namespace spmd::detail
