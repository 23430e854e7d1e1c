// Where an Array's shards are kept: in the memory of their device, as jax.device_put leaves a
// buffer on its device. Every Array made from data (device_put, make_array_*, a reshard's
// result: Array's checked constructor) places each shard through the placer. The array layer
// knows no kernels, so the compute layer installs the placer (compute/resident_shard.h): a
// shard of a device that computes in its own memory (a GPU) is copied there once and read back
// only when the host asks. With none installed, every shard stays in host memory.
#pragma once

#include "spmd/device.h"
#include "spmd/host_array.h"

namespace spmd {

// Returns `data` as `device` keeps it (in its memory, or `data` itself). Called from any thread;
// throws the placer's error (device memory exhausted, say).
using ShardPlacer = HostArray (*)(const Device& device, HostArray data);

// Installs `placer` for every later Array (at load, before any thread makes one).
void set_shard_placer(ShardPlacer placer);

// `data` as `device` keeps it: the placer's answer, or `data` when none is installed.
HostArray place_shard(const Device& device, HostArray data);

}  // namespace spmd
