// Shards that stay in a device's memory between calls. jit's outputs on a GPU keep their device
// buffers inside a deferred HostArray (spmd/host_array.h), which copies them to the host only
// when the host first reads the shard, as a jax.Array's value is copied from its device when
// first asked for. A later call that takes the array on the same device uses the buffer where
// it lies, so a training loop's parameters and optimizer state never cross to the host.
//
// The same holds for data entering an Array (device_put, make_array_*): this file installs the
// array layer's shard placer (array/shard_placement.h) when libspmd loads, which copies a shard
// of such a device into its memory once, as jax.device_put does.
#pragma once

#include <optional>

#include "spmd/block.h"
#include "spmd/host_array.h"
#include "spmd/memory_space.h"

namespace spmd {

// `block`, in a device's memory, as the shard data of an Array: its dtype and shape, its bytes
// copied from the device by the block's backend on their first read.
HostArray resident_shard(Block block);

// The device block that `data` keeps (resident_shard), in `data`'s shape, when it lies in
// `memory`; nullopt for any other HostArray or memory.
std::optional<Block> resident_block(const HostArray& data, MemorySpace memory);

}  // namespace spmd
