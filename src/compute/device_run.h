// What runs on this process's devices of a mesh: a job per device, each on its own worker inside
// its axis context, with one failure releasing the others. shard_map runs its function so
// (run_on_devices), and jit's executable its per-device program (jit/executable.h).
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

#include "compute/axis_context.h"
#include "compute/axis_groups.h"
#include "spmd/array.h"
#include "spmd/block.h"
#include "spmd/mesh.h"
#include "spmd/partition_spec.h"
#include "spmd/shard_map.h"

namespace spmd {

// This process's devices of a mesh, in mesh order.
struct LocalMeshDevices {
  std::vector<int64_t> positions;            // flat mesh positions
  std::vector<int> ids;                      // device ids
  std::vector<int> hardware;                 // their local hardware ids (Device::local_hardware_id)
  std::vector<std::vector<int64_t>> coords;  // mesh coordinates
};

// True when x's shards sit where `target` puts them: the same devices, each with the same index.
bool same_layout(const Array& x, const Sharding& target);

// x's shard on device `id` as a block: the device buffer it keeps when that lies in `memory`
// (compute/resident_shard.h), else a view of its host bytes (a resident shard's copied to the
// host first). Throws InvalidArgument, naming input `input`, when x has no shard there.
Block block_of(const Array& x, int id, size_t input, MemorySpace memory = MemorySpace::host());

// Throws InvalidArgument when this process owns no device of `mesh`.
LocalMeshDevices local_mesh_devices(const Mesh& mesh);

// A call's identity: the function's name and every spec, hashed. The devices compare it in
// check_outputs, so that processes running different calls whose collectives line up are told.
uint64_t call_identity(const char* program, const std::vector<PartitionSpec>& in_specs,
                       const std::vector<PartitionSpec>& out_specs);

// job(i, context) for each local device i, concurrently on the device workers (the first on the
// calling thread), inside the device's axis context. The first failure closes `groups` (the
// reason naming the device, its process and `what` ran: "the shard_map function"), so that
// devices waiting for the failed one in a collective are released, and is rethrown once every
// device has returned; `groups` reopens then, every device being done with the call.
void for_each_local_device(AxisGroups& groups, const LocalMeshDevices& local, std::string_view what,
                           const std::function<void(size_t, const AxisContext&)>& job);

// fn on blocks[i] on device local.ids[i] (for_each_local_device), then check_outputs with `call`.
// Returns each device's output blocks.
std::vector<std::vector<Block>> run_on_devices(AxisGroups& groups, const LocalMeshDevices& local,
                                               uint64_t call,
                                               const std::vector<PartitionSpec>& out_specs,
                                               const ShardMapOptions& options,
                                               std::vector<std::vector<Block>>& blocks,
                                               const detail::BlockFunction& fn);

}  // namespace spmd
