// The operations of lax::shard_map in a trace (traced_shard_map.h), for the shard_map itself and
// for the derivatives of its boundaries (ops/manual.cc).
#pragma once

#include <cstdint>
#include <vector>

#include "jit/program.h"
#include "spmd/mesh.h"
#include "spmd/partition_spec.h"
#include "spmd/tensor.h"

namespace spmd::compiler {

// Each device's block of `x` laid out as NamedSharding(mesh, spec); throws IndivisibleError for
// an uneven split and InvalidArgument for a spec the array or the mesh cannot take.
Tensor manual_in(const Tensor& x, const Mesh& mesh, const PartitionSpec& spec);
// The global value whose blocks, laid out as NamedSharding(mesh, spec), `block` holds.
Tensor manual_out(const Tensor& block, const Mesh& mesh, const PartitionSpec& spec);
// `block` summed over the mesh axes at positions `axes` (itself when there are none).
Tensor axis_sum(const Tensor& block, const Mesh& mesh, const std::vector<int>& axes);

// Which mesh axes a block varies over (JAX's "varying manual axes"): a block of an argument
// varies over the axes its spec splits it by, an operation's result over its operands' union,
// and psum's result no longer over the summed axes. Values outside every shard_map vary over
// none. `mesh` is the shard_map's (null outside one).
struct Varying {
  uint64_t axes = 0;  // bit a: mesh axis a
  const Mesh* mesh = nullptr;
};
std::vector<Varying> varying_axes(const Program& program);
// True while a lax::shard_map's function is being traced on this thread.
bool in_shard_map_body();
// The positions of the bits of `axes`, and back.
std::vector<int> axis_positions(uint64_t axes);
uint64_t axis_bits(const std::vector<int>& positions);

}  // namespace spmd::compiler
