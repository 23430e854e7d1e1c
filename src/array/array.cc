#include "spmd/array.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "array/shard_placement.h"
#include "spmd/device.h"

namespace spmd {
namespace {

// Each shard as its device keeps it (array/shard_placement.h).
std::vector<Shard> placed(std::vector<Shard> shards) {
  for (Shard& s : shards) s.data = place_shard(s.device, std::move(s.data));
  return shards;
}

}  // namespace

Array::Array(Shape shape, DType dtype, std::shared_ptr<const Sharding> sharding,
             std::vector<Shard> addressable_shards, int process_index)
    : Array(std::move(shape), dtype, std::move(sharding), placed(std::move(addressable_shards)),
            process_index, Unchecked{}) {
  std::vector<DeviceIndex> expected;
  for (auto& e : sharding_->devices_indices_map(shape_)) {
    if (e.device.process_index() == process_index_) expected.push_back(std::move(e));
  }
  if (expected.size() != shards_->size()) {
    throw InvalidArgument(fmt::format("{} expects {} shards in process {}, got {}",
                                      sharding_->to_string(), expected.size(), process_index_,
                                      shards_->size()));
  }
  for (size_t i = 0; i < shards_->size(); ++i) {
    const Shard& s = (*shards_)[i];
    if (!(s.device == expected[i].device) || s.index != expected[i].index ||
        s.data.dtype() != dtype_ || s.data.shape() != index_extents(s.index)) {
      throw InvalidArgument(fmt::format(
          "shard {} ({} at {}, {}[{}]) does not match the sharding, which puts {} at {} as {}[{}]",
          i, s.device.to_string(), index_to_string(s.index), dtype_name(s.data.dtype()),
          fmt::join(s.data.shape(), ", "), expected[i].device.to_string(),
          index_to_string(expected[i].index), dtype_name(dtype_),
          fmt::join(index_extents(expected[i].index), ", ")));
    }
  }
}

Array::Array(Shape shape, DType dtype, std::shared_ptr<const Sharding> sharding,
             std::vector<Shard> addressable_shards, int process_index, Unchecked)
    : shape_(std::move(shape)),
      dtype_(dtype),
      sharding_(std::move(sharding)),
      shards_(std::make_shared<const std::vector<Shard>>(std::move(addressable_shards))),
      process_index_(process_index) {}

int64_t Array::size() const { return shape_size(shape_); }

const HostArray& Array::addressable_data(int i) const {
  const std::vector<Shard>& shards = addressable_shards();
  if (i < 0 || i >= static_cast<int>(shards.size())) {
    throw InvalidArgument(
        fmt::format("addressable_data({}): this process holds {} shards", i, shards.size()));
  }
  return shards[static_cast<size_t>(i)].data;
}

void Array::throw_deleted() const {
  throw InvalidArgument(fmt::format(
      "Array has been deleted with shape={}[{}]: it was donated to a jitted function "
      "(donate_argnums) or deleted by Array.delete(), and its data is gone; use the function's "
      "result instead",
      dtype_name(dtype_), fmt::join(shape_, ",")));
}

bool Array::is_fully_addressable() const { return sharding_->is_fully_addressable(process_index_); }

void Array::block_until_ready() const {
  for (const Shard& shard : addressable_shards()) {
    if (const DeferredSource* source = shard.data.deferred_source()) source->wait_ready();
  }
}

HostArray Array::to_host() const {
  // Every device holds all of a replicated array: this process's copy is the array (as jax's).
  const std::vector<Shard>& shards = addressable_shards();
  if (is_fully_replicated() && !shards.empty()) return shards[0].data;
  if (!is_fully_addressable()) {
    throw FailedPrecondition(fmt::format(
        "{} spans devices of other processes, so this process cannot read it whole; gather it "
        "with spmd::multihost::process_allgather, or read addressable_shards()",
        to_string()));
  }
  HostArray out = HostArray::zeros(dtype_, shape_);
  for (const auto& s : shards) {
    if (s.replica_id == 0) out.assign(s.index, s.data);
  }
  return out;
}

std::string Array::to_string() const {
  return fmt::format("Array({}[{}], {})", dtype_name(dtype_), fmt::join(shape_, ", "),
                     sharding_->to_string());
}

}  // namespace spmd
