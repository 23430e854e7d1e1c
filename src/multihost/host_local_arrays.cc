// Converting between a process's host-local data and global arrays laid out by a mesh and spec.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "spmd/error.h"
#include "spmd/multihost.h"
#include "spmd/runtime.h"
#include "spmd/sharding.h"

namespace spmd::multihost {

Array host_local_array_to_global_array(const HostArray& local, const Mesh& mesh,
                                       const PartitionSpec& spec) {
  return make_array_from_process_local_data(NamedSharding(mesh, spec), local);
}

HostArray global_array_to_host_local_array(const Array& array, const Mesh& mesh,
                                           const PartitionSpec& spec) {
  const NamedSharding target(mesh, spec);
  // Already laid out so when every device holds the same index under both (a mesh's device
  // order matters, so comparing descriptions would not do).
  const auto have = array.sharding().devices_indices_map(array.shape());
  const auto want = target.devices_indices_map(array.shape());
  const bool same =
      have.size() == want.size() && std::equal(have.begin(), have.end(), want.begin(),
                                               [](const DeviceIndex& a, const DeviceIndex& b) {
                                                 return a.device == b.device && a.index == b.index;
                                               });
  const Array placed = same ? array : device_put(array, target);
  const auto& shards = placed.addressable_shards();
  if (shards.empty()) {
    throw InvalidArgument(
        fmt::format("process {} holds no device of {}", process_index(), target.to_string()));
  }
  // The box this process's shards cover.
  Index box = shards.front().index;
  for (const Shard& s : shards) {
    for (size_t d = 0; d < box.size(); ++d) {
      box[d].start = std::min(box[d].start, s.index[d].start);
      box[d].stop = std::max(box[d].stop, s.index[d].stop);
    }
  }
  // Covered exactly when the distinct shards' volumes add up to the box's.
  std::vector<Index> distinct;
  int64_t covered = 0;
  for (const Shard& s : shards) {
    if (std::find(distinct.begin(), distinct.end(), s.index) != distinct.end()) continue;
    distinct.push_back(s.index);
    covered += shape_size(index_extents(s.index));
  }
  if (covered != shape_size(index_extents(box))) {
    throw InvalidArgument(fmt::format(
        "process {}'s devices hold {} of {} with gaps, not one box; use process_allgather or a "
        "mesh whose devices of one process are contiguous along the split axes",
        process_index(), index_to_string(box), target.to_string()));
  }
  HostArray local = HostArray::zeros(placed.dtype(), index_extents(box));
  for (const Index& index : distinct) {
    Index at = index;
    for (size_t d = 0; d < at.size(); ++d) {
      at[d].start -= box[d].start;
      at[d].stop -= box[d].start;
    }
    const auto it = std::find_if(shards.begin(), shards.end(),
                                 [&](const Shard& s) { return s.index == index; });
    local.assign(at, it->data);
  }
  return local;
}

}  // namespace spmd::multihost
