// How the partitioner sees a value's placement: per dimension, the mesh axes splitting it (major
// first, as a PartitionSpec entry), and the mesh axes over which each device holds only a partial
// sum (GSPMD's "partial" state, left by a contraction or sum over a split dimension).
#pragma once

#include <string>
#include <vector>

#include "spmd/mesh.h"
#include "spmd/sharding.h"

namespace spmd::compiler {

struct Layout {
  std::vector<std::vector<int>> dims;  // mesh axis positions per dimension
  std::vector<int> partial;            // mesh axis positions of a pending sum

  bool operator==(const Layout&) const = default;
  // Replicated on every dimension, no pending sum.
  static Layout replicated(size_t rank) { return Layout{std::vector<std::vector<int>>(rank), {}}; }
  // Every mesh axis this layout uses (dims and partial).
  std::vector<int> used_axes() const;
  // The same layout without its pending sum: what a use that needs whole values asks for.
  Layout settled() const {
    Layout l = *this;
    l.partial.clear();
    return l;
  }
};

// True when `l` splits nothing and has no pending sum.
bool is_replicated(const Layout& l);

// The layout of NamedSharding(mesh, spec) on an array of rank `rank`.
Layout layout_of(const NamedSharding& sharding, size_t rank);
// The PartitionSpec of a layout without a pending sum.
PartitionSpec spec_of(const Layout& layout, const Mesh& mesh);
// "P('dp', None)" or "P(None, None) partial(mp)".
std::string layout_text(const Layout& layout, const Mesh& mesh);
// The product of the sizes of `axes`.
int64_t axes_size(const std::vector<int>& axes, const Mesh& mesh);
// The shape each device holds: ceil(global / parts) along each split dimension, as XLA tiles an
// uneven split (10 over 4 devices: blocks of 3, the last holding 1 element and 2 of padding).
// What padding holds is unspecified; the rules that read along a padded dimension (reductions,
// contractions) fill it first (Partitioner::fill_padding), and gathers drop it.
Shape local_shape(const Shape& global, const Layout& layout, const Mesh& mesh);
// The same, but throws IndivisibleError naming `what` when a split is uneven: shard_map's blocks
// carry no padding (JAX's shard_map refuses them too).
Shape even_local_shape(const Shape& global, const Layout& layout, const Mesh& mesh,
                       const std::string& what);
// What a rule needs in the padding it reads (Partitioner::fill_padding): the identity of a sum
// (zero), of a max (the dtype's lowest value) or of a min (its highest).
enum class PaddingFill : uint8_t { kZero, kLowest, kHighest };

// The dimensions among `dims` that `layout` splits unevenly (their blocks carry padding).
std::vector<int> padded_dims(const Shape& global, const Layout& layout, const Mesh& mesh,
                             const std::vector<int>& dims);
// The mesh axes' names, for named collectives.
std::vector<std::string> axis_names(const std::vector<int>& axes, const Mesh& mesh);

}  // namespace spmd::compiler
