// What shard_map does with the blocks its function returns: checks them across the mesh (same
// count, shapes and dtypes everywhere; equal along the axes an out_spec leaves out) and
// assembles them into global arrays.
#pragma once

#include <cstdint>
#include <vector>

#include "compute/axis_context.h"
#include "spmd/array.h"
#include "spmd/block.h"
#include "spmd/mesh.h"
#include "spmd/partition_spec.h"
#include "spmd/shard_map.h"

namespace spmd {

// The out_spec of output `k` of `count`: out_specs[k], or the only one. Throws InvalidArgument
// when out_specs has neither one entry nor `count`.
const PartitionSpec& out_spec_of(const std::vector<PartitionSpec>& out_specs, size_t k,
                                 size_t count);

// Run by every device of the mesh on its own thread after the function returned `blocks`: one
// small all-gather over the whole mesh, after which every device reaches the same verdict and
// throws the same error: CollectiveMismatch when devices ran different calls (`call` differs),
// InvalidArgument when blocks differ in shape or dtype, do not fit their out_spec, or (with
// options.check_rep) differ along an axis their out_spec leaves out.
void check_outputs(const AxisContext& context, uint64_t call,
                   const std::vector<PartitionSpec>& out_specs, const ShardMapOptions& options,
                   const std::vector<Block>& blocks);

// The global arrays of checked blocks: results[i] are the blocks of the device at flat mesh
// position positions[i] (this process's, in mesh order). Moves the blocks' elements out.
std::vector<Array> assemble_outputs(const Mesh& mesh, const std::vector<PartitionSpec>& out_specs,
                                    const std::vector<int64_t>& positions,
                                    std::vector<std::vector<Block>>& results);

}  // namespace spmd
