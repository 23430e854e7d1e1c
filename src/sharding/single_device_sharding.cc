#include <fmt/format.h>

#include "spmd/sharding.h"

namespace spmd {

SingleDeviceSharding::SingleDeviceSharding(Device device) : devices_{std::move(device)} {}

std::vector<DeviceIndex> SingleDeviceSharding::devices_indices_map(
    const Shape& global_shape) const {
  Index whole;
  for (int64_t d : global_shape) whole.push_back(Slice{0, d});
  return {DeviceIndex{devices_[0], std::move(whole), 0}};
}

std::vector<int64_t> SingleDeviceSharding::shard_counts(size_t rank) const {
  return std::vector<int64_t>(rank, 1);
}

std::shared_ptr<const Sharding> SingleDeviceSharding::clone() const {
  return std::make_shared<SingleDeviceSharding>(*this);
}

std::string SingleDeviceSharding::to_string() const {
  return fmt::format("SingleDeviceSharding(device={})", devices_[0].to_string());
}

}  // namespace spmd
