// The part of a shard_map call that runs on this process's mesh devices: the function on each
// device's blocks, each on its own thread inside its axis context, then the outputs checked
// across the mesh. Shared by run_shard_map (which lays the inputs out on every call) and
// PlannedCall (which works the layouts out once).
#pragma once

#include <cstdint>
#include <vector>

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
  std::vector<std::vector<int64_t>> coords;  // mesh coordinates
};

// True when x's shards sit where `target` puts them: the same devices, each with the same index.
bool same_layout(const Array& x, const Sharding& target);

// A view of x's shard on device `id`. Throws InvalidArgument, naming input `input`, when x has no
// shard there.
Block block_of(const Array& x, int id, size_t input);

// Throws InvalidArgument when this process owns no device of `mesh`.
LocalMeshDevices local_mesh_devices(const Mesh& mesh);

// A call's identity: the function's name and every spec, hashed. The devices compare it in
// check_outputs, so that processes running different calls whose collectives line up are told.
uint64_t call_identity(const char* program, const std::vector<PartitionSpec>& in_specs,
                       const std::vector<PartitionSpec>& out_specs);

// fn on blocks[i] on device local.ids[i], concurrently on the device workers (the first on the
// calling thread), then check_outputs with `call`. The first failure closes `groups`, so that
// devices waiting for the failed one in a collective are released, and is rethrown once every
// device has returned. Returns each device's output blocks.
std::vector<std::vector<Block>> run_on_devices(AxisGroups& groups, const LocalMeshDevices& local,
                                               uint64_t call,
                                               const std::vector<PartitionSpec>& out_specs,
                                               const ShardMapOptions& options,
                                               std::vector<std::vector<Block>>& blocks,
                                               const detail::BlockFunction& fn);

}  // namespace spmd
