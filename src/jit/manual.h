// The operations of lax::shard_map in a trace (traced_shard_map.h), for the shard_map itself and
// for the derivatives of its boundaries (ops/manual.cc).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "jit/program.h"
#include "spmd/mesh.h"
#include "spmd/partition_spec.h"
#include "spmd/tensor.h"

namespace spmd::compiler {

// Each device's block of `x` laid out as NamedSharding(mesh, spec); throws IndivisibleError for
// an uneven split and InvalidArgument for a spec the array or the mesh cannot take. `check_vma`:
// whether the body's values are typed by the axes they vary over (JAX's check_vma).
Tensor manual_in(const Tensor& x, const Mesh& mesh, const PartitionSpec& spec,
                 bool check_vma = true);
// The global value whose blocks, laid out as NamedSharding(mesh, spec), `block` holds.
Tensor manual_out(const Tensor& block, const Mesh& mesh, const PartitionSpec& spec,
                  bool check_vma = true);
// `block` summed over the mesh axes at positions `axes` (itself when there are none).
Tensor axis_sum(const Tensor& block, const Mesh& mesh, const std::vector<int>& axes);
// `block` gathered (or, with `scatter`, summed and scattered) along dimension `dim`, tiled.
Tensor axis_gather(const Tensor& block, const Mesh& mesh, const std::vector<int>& axes, int dim,
                   bool scatter, bool check_vma);
// `block` moved from device to device along `axes` by (source, target) axis indices.
Tensor axis_permute(const Tensor& block, const Mesh& mesh, const std::vector<int>& axes,
                    const std::vector<std::pair<int, int>>& perm, bool check_vma);

// Which mesh axes a block varies over (JAX's "varying manual axes"): a block of an argument
// varies over the axes its spec splits it by, an operation's result over its operands' union,
// and a reduction's result (psum, pmax, pmin) no longer over the reduced axes; all_gather,
// psum_scatter, ppermute, axis_index and pvary results vary over their axes as well. Values
// outside every shard_map vary over none. `mesh` is the shard_map's (null outside one);
// `checked`: the value is in a shard_map with check_vma (autodiff follows the types there).
struct Varying {
  uint64_t axes = 0;  // bit a: mesh axis a
  const Mesh* mesh = nullptr;
  bool checked = false;
};
std::vector<Varying> varying_axes(const Program& program);
// The axes an operation of the body makes its operands vary over before it acts (JAX's implicit
// pvary, insert_collective_pvary): a reduction's axes (psum of an invariant value sums its
// copies); none for the others, whose results already carry their axes.
uint64_t implicit_vary(const Op& op);
// True while a lax::shard_map's function is being traced on this thread.
bool in_shard_map_body();
// The positions of the bits of `axes`, and back.
std::vector<int> axis_positions(uint64_t axes);
uint64_t axis_bits(const std::vector<int>& positions);

}  // namespace spmd::compiler
