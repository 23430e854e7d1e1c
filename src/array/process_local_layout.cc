#include "array/process_local_layout.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <set>

namespace spmd {

ProcessLocalLayout process_local_layout(const Sharding& sharding, const Shape& local_shape,
                                        const std::optional<Shape>& given_global,
                                        int process_index) {
  const size_t rank = local_shape.size();
  if (given_global && given_global->size() != rank) {
    throw InvalidArgument(
        fmt::format("the local data has rank {} but global_shape ({}) has rank {}", rank,
                    fmt::join(*given_global, ", "), given_global->size()));
  }
  // Each dimension of size n_d probed with chunks of 1: a device's start is its shard position.
  const Shape counts = sharding.shard_counts(rank);
  const auto positions = sharding.devices_indices_map(counts);
  std::vector<std::set<int64_t>> local_positions(rank);
  bool owns_a_device = false;  // a scalar has no positions, so count devices, not positions
  for (const auto& e : positions) {
    if (e.device.process_index() != process_index) continue;
    owns_a_device = true;
    for (size_t d = 0; d < rank; ++d) local_positions[d].insert(e.index[d].start);
  }
  if (!owns_a_device) {
    throw InvalidArgument(
        fmt::format("process {} has no devices in {}", process_index, sharding.to_string()));
  }

  ProcessLocalLayout layout;
  layout.global_shape.resize(rank);
  std::vector<bool> whole(rank);  // the local data holds the dimension's whole extent
  for (size_t d = 0; d < rank; ++d) {
    const int64_t n = counts[d];
    const auto k = static_cast<int64_t>(local_positions[d].size());
    const int64_t local = local_shape[d];
    int64_t global = 0;
    if (given_global) {
      global = (*given_global)[d];
    } else if (k == n) {
      global = local;  // this process covers the dimension: its data is the whole extent
    } else {
      if (local % k != 0) {
        throw InvalidArgument(fmt::format(
            "dimension {}: the local size {} is not a multiple of the {} shards this process "
            "holds along it (of {}), so the global size cannot be inferred; pass global_shape",
            d, local, k, n));
      }
      global = local / k * n;
    }
    if (global % n != 0) {
      throw IndivisibleError(fmt::format(
          "dimension {}: the global size {} is split into {} shards, which does not divide it", d,
          global, n));
    }
    const int64_t share = global / n * k;
    if (local == global) {
      whole[d] = true;
    } else if (local != share) {
      throw InvalidArgument(fmt::format(
          "dimension {}: the local size {} is neither the global size {} nor this process's "
          "share {} ({} of {} shards of {})",
          d, local, global, share, k, n, global / n));
    }
    layout.global_shape[d] = global;
  }

  for (const auto& e : sharding.devices_indices_map(layout.global_shape)) {
    if (e.device.process_index() != process_index) continue;
    LocalPlacement p{e, {}};
    for (size_t d = 0; d < rank; ++d) {
      if (whole[d]) {
        p.local.push_back(e.index[d]);
        continue;
      }
      // Shards are packed in increasing global order: count this process's shards before it.
      const int64_t chunk = layout.global_shape[d] / counts[d];
      const int64_t position = e.index[d].start / std::max<int64_t>(chunk, 1);
      const auto& mine = local_positions[d];
      const int64_t rank_in_process = std::distance(mine.begin(), mine.find(position));
      p.local.push_back(Slice{rank_in_process * chunk, (rank_in_process + 1) * chunk});
    }
    layout.shards.push_back(std::move(p));
  }
  return layout;
}

}  // namespace spmd
