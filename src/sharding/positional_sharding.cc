#include <fmt/format.h>
#include <fmt/ranges.h>

#include "sharding/tiling.h"
#include "spmd/sharding.h"

namespace spmd {
PositionalSharding::PositionalSharding(const std::vector<Device>& devices)
    : PositionalSharding(devices, {static_cast<int64_t>(devices.size())}) {}

PositionalSharding::PositionalSharding(std::vector<Device> devices, Shape shape)
    : devices_(std::move(devices)), shape_(std::move(shape)), replicated_(shape_.size(), false) {
  if (devices_.empty() || shape_size(shape_) != static_cast<int64_t>(devices_.size())) {
    throw InvalidArgument(fmt::format("a PositionalSharding of shape ({}) needs {} devices, got {}",
                                      fmt::join(shape_, ", "), shape_size(shape_),
                                      devices_.size()));
  }
}

PositionalSharding PositionalSharding::reshape(Shape shape) const {
  for (bool r : replicated_) {
    if (r) throw InvalidArgument("a PositionalSharding with replicated axes cannot be reshaped");
  }
  shape = reshaped(shape_, std::move(shape));
  return PositionalSharding(devices_, std::move(shape));
}

PositionalSharding PositionalSharding::replicate(int axis) const {
  if (axis < 0 || axis >= static_cast<int>(shape_.size())) {
    throw InvalidArgument(
        fmt::format("axis {} is outside a PositionalSharding of rank {}", axis, shape_.size()));
  }
  PositionalSharding out = *this;
  out.replicated_[axis] = true;
  return out;
}

std::vector<DeviceIndex> PositionalSharding::devices_indices_map(const Shape& global_shape) const {
  if (global_shape.size() != shape_.size()) {
    throw InvalidArgument(fmt::format(
        "a PositionalSharding of shape ({}) applies to arrays of rank {}, not {}; reshape it "
        "(e.g. .reshape({{{}, 1}}))",
        fmt::join(shape_, ", "), shape_.size(), global_shape.size(), devices_.size()));
  }
  std::vector<DeviceIndex> map;
  for (size_t f = 0; f < devices_.size(); ++f) {
    Index index(shape_.size());
    int64_t rest = static_cast<int64_t>(f);
    for (size_t d = shape_.size(); d-- > 0;) {
      const int64_t coord = rest % shape_[d];
      rest /= shape_[d];
      index[d] =
          replicated_[d] ? Slice{0, global_shape[d]} : tile(global_shape[d], shape_[d], coord);
    }
    map.push_back({devices_[f], std::move(index), 0});
  }
  assign_replica_ids(map);
  return map;
}

Shape PositionalSharding::shard_shape(const Shape& global_shape) const {
  devices_indices_map(global_shape);  // rank check
  Shape out = global_shape;
  for (size_t d = 0; d < shape_.size(); ++d) {
    if (replicated_[d]) continue;
    if (global_shape[d] % shape_[d] != 0) {
      throw IndivisibleError(fmt::format(
          "PositionalSharding: dimension {} of size {} is split into {} shards, which does not "
          "divide it",
          d, global_shape[d], shape_[d]));
    }
    out[d] = global_shape[d] / shape_[d];
  }
  return out;
}

bool PositionalSharding::is_fully_replicated() const {
  for (size_t d = 0; d < shape_.size(); ++d) {
    if (shape_[d] != 1 && !replicated_[d]) return false;
  }
  return true;
}

std::vector<int64_t> PositionalSharding::shard_counts(size_t rank) const {
  std::vector<int64_t> out(rank, 1);
  for (size_t d = 0; d < std::min(rank, shape_.size()); ++d)
    out[d] = replicated_[d] ? 1 : shape_[d];
  return out;
}

std::shared_ptr<const Sharding> PositionalSharding::clone() const {
  return std::make_shared<PositionalSharding>(*this);
}

std::string PositionalSharding::to_string() const {
  return fmt::format("PositionalSharding(shape=({}))", fmt::join(shape_, ", "));
}

}  // namespace spmd
