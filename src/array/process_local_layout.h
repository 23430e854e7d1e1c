// Where each of a process's shards sits in the data that process holds, for
// make_array_from_process_local_data. Pure: the process index is an argument.
#pragma once

#include <optional>
#include <vector>

#include "spmd/sharding.h"

namespace spmd {

struct LocalPlacement {
  DeviceIndex global;  // the device, its index in the global array, its replica id
  Index local;         // the same shard's box in the process-local data
};

struct ProcessLocalLayout {
  Shape global_shape;
  std::vector<LocalPlacement> shards;  // the process's devices, in the sharding's device order
};

// JAX's rules (see make_array_from_process_local_data in array.h). Throws InvalidArgument or
// IndivisibleError saying which dimension breaks them.
ProcessLocalLayout process_local_layout(const Sharding& sharding, const Shape& local_shape,
                                        const std::optional<Shape>& global_shape,
                                        int process_index);

}  // namespace spmd
