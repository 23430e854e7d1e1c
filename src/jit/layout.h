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
// The shape each device holds; throws IndivisibleError naming `what` when a split is uneven.
Shape local_shape(const Shape& global, const Layout& layout, const Mesh& mesh,
                  const std::string& what);
// The mesh axes' names, for named collectives.
std::vector<std::string> axis_names(const std::vector<int>& axes, const Mesh& mesh);

}  // namespace spmd::compiler
