// XLA's tiling of one dimension, shared by every sharding. Pure.
#pragma once

#include <algorithm>
#include <cstdint>

#include "spmd/sharding.h"

namespace spmd {

// Shard `i` of `n` of a dimension of size `size`: chunks of ceil(size / n), the last ones
// shorter or empty.
inline Slice tile(int64_t size, int64_t n, int64_t i) {
  const int64_t chunk = (size + n - 1) / n;
  const int64_t start = std::min(size, i * chunk);
  return Slice{start, std::min(size, start + chunk)};
}

// Numbers devices that hold equal indices 0, 1, … in the order given.
void assign_replica_ids(std::vector<DeviceIndex>& map);

}  // namespace spmd
