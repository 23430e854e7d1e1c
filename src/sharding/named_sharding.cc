#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <set>

#include "sharding/tiling.h"
#include "spmd/mesh_context.h"
#include "spmd/sharding.h"

namespace spmd {

NamedSharding::NamedSharding(const PartitionSpec& spec)
    : NamedSharding(mesh_in_scope(spec.to_string()), spec) {}

NamedSharding::NamedSharding(Mesh mesh, PartitionSpec spec)
    : mesh_(std::move(mesh)), spec_(std::move(spec)) {
  std::set<std::string> used;
  for (const auto& entry : spec_.entries()) {
    std::vector<int> axes;
    for (const auto& name : entry.axes()) {
      if (!used.insert(name).second) {
        throw DuplicateSpecError(fmt::format(
            "{} has duplicate entries for '{}': one mesh axis can split at most one dimension",
            spec_.to_string(), name));
      }
      const auto& names = mesh_.axis_names();
      auto it = std::find(names.begin(), names.end(), name);
      if (it == names.end()) {
        throw InvalidArgument(fmt::format("{} names the axis '{}', but {} has axes ({})",
                                          spec_.to_string(), name, mesh_.to_string(),
                                          fmt::join(names, ", ")));
      }
      axes.push_back(static_cast<int>(it - names.begin()));
    }
    dim_axes_.push_back(std::move(axes));
  }
}

void NamedSharding::check_rank(const Shape& global_shape) const {
  if (spec_.size() > global_shape.size()) {
    throw InvalidArgument(fmt::format(
        "{} has {} entries, so it applies to arrays of rank at least {}, but the array has rank "
        "{} (shape ({}))",
        spec_.to_string(), spec_.size(), spec_.size(), global_shape.size(),
        fmt::join(global_shape, ", ")));
  }
  for (int64_t d : global_shape) {
    if (d < 0) {
      throw InvalidArgument(fmt::format("array dimensions must not be negative: ({})",
                                        fmt::join(global_shape, ", ")));
    }
  }
}

std::vector<DeviceIndex> NamedSharding::devices_indices_map(const Shape& global_shape) const {
  check_rank(global_shape);
  const auto& sizes = mesh_.axis_sizes();
  std::vector<DeviceIndex> map;
  map.reserve(static_cast<size_t>(mesh_.size()));
  for (int64_t f = 0; f < mesh_.size(); ++f) {
    const auto coords = mesh_.coordinates(f);
    Index index;
    for (size_t d = 0; d < global_shape.size(); ++d) {
      int64_t n = 1;
      int64_t i = 0;
      if (d < dim_axes_.size()) {
        for (int axis : dim_axes_[d]) {  // major to minor: mixed radix
          n *= sizes[axis];
          i = i * sizes[axis] + coords[axis];
        }
      }
      index.push_back(tile(global_shape[d], n, i));
    }
    map.push_back({mesh_.devices()[f], std::move(index), 0});
  }
  assign_replica_ids(map);
  return map;
}

Shape NamedSharding::shard_shape(const Shape& global_shape) const {
  check_rank(global_shape);
  Shape out = global_shape;
  for (size_t d = 0; d < dim_axes_.size(); ++d) {
    int64_t n = 1;
    std::vector<std::string> names;
    for (int axis : dim_axes_[d]) {
      n *= mesh_.axis_sizes()[axis];
      names.push_back(mesh_.axis_names()[axis]);
    }
    if (global_shape[d] % n != 0) {
      throw IndivisibleError(fmt::format(
          "{}: dimension {} of size {} is split over axes ({}) into {} shards, which does not "
          "divide it; make the size a multiple of {} or split it differently",
          spec_.to_string(), d, global_shape[d], fmt::join(names, ", "), n, n));
    }
    out[d] = global_shape[d] / n;
  }
  return out;
}

bool NamedSharding::is_fully_replicated() const {
  for (const auto& axes : dim_axes_) {
    for (int axis : axes) {
      if (mesh_.axis_sizes()[axis] != 1) return false;
    }
  }
  return true;
}

std::vector<int64_t> NamedSharding::shard_counts(size_t rank) const {
  std::vector<int64_t> out(rank, 1);
  for (size_t d = 0; d < std::min(rank, dim_axes_.size()); ++d) {
    for (int axis : dim_axes_[d]) out[d] *= mesh_.axis_sizes()[axis];
  }
  return out;
}

std::shared_ptr<const Sharding> NamedSharding::clone() const {
  return std::make_shared<NamedSharding>(*this);
}

std::string NamedSharding::to_string() const {
  return fmt::format("NamedSharding(mesh={}, spec={})", mesh_.to_string(), spec_.to_string());
}

}  // namespace spmd
