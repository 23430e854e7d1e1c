#include "jit/layout.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "spmd/error.h"

namespace spmd::compiler {

std::vector<int> Layout::used_axes() const {
  std::vector<int> out = partial;
  for (const auto& d : dims) out.insert(out.end(), d.begin(), d.end());
  return out;
}

bool is_replicated(const Layout& l) {
  if (!l.partial.empty()) return false;
  for (const auto& d : l.dims) {
    if (!d.empty()) return false;
  }
  return true;
}

Layout layout_of(const NamedSharding& sharding, size_t rank) {
  Layout l = Layout::replicated(rank);
  const auto& entries = sharding.spec().entries();
  if (entries.size() > rank) {
    throw InvalidArgument(fmt::format("sharding {} has {} entries for an array of rank {}",
                                      sharding.to_string(), entries.size(), rank));
  }
  for (size_t d = 0; d < entries.size(); ++d) {
    for (const std::string& axis : entries[d].axes()) {
      l.dims[d].push_back(sharding.mesh().axis_index(axis));
    }
  }
  return l;
}

PartitionSpec spec_of(const Layout& layout, const Mesh& mesh) {
  std::vector<AxisEntry> entries;
  for (const auto& d : layout.dims) entries.emplace_back(axis_names(d, mesh));
  while (!entries.empty() && entries.back().is_none()) entries.pop_back();
  return PartitionSpec::from_entries(std::move(entries));
}

std::string layout_text(const Layout& layout, const Mesh& mesh) {
  std::string s = spec_of(layout, mesh).to_string();
  if (!layout.partial.empty()) {
    s += fmt::format(" partial({})", fmt::join(axis_names(layout.partial, mesh), ","));
  }
  return s;
}

int64_t axes_size(const std::vector<int>& axes, const Mesh& mesh) {
  int64_t n = 1;
  for (int a : axes) n *= mesh.axis_sizes()[static_cast<size_t>(a)];
  return n;
}

Shape local_shape(const Shape& global, const Layout& layout, const Mesh& mesh) {
  Shape out = global;
  for (size_t d = 0; d < global.size(); ++d) {
    const int64_t parts = axes_size(layout.dims[d], mesh);
    out[d] = (global[d] + parts - 1) / parts;
  }
  return out;
}

Shape even_local_shape(const Shape& global, const Layout& layout, const Mesh& mesh,
                       const std::string& what) {
  for (size_t d = 0; d < global.size(); ++d) {
    const int64_t parts = axes_size(layout.dims[d], mesh);
    if (global[d] % parts != 0) {
      throw IndivisibleError(fmt::format(
          "{}: dimension {} of size {} cannot be split evenly over mesh axes ({}) of {} devices",
          what, d, global[d], fmt::join(axis_names(layout.dims[d], mesh), ", "), parts));
    }
  }
  return local_shape(global, layout, mesh);
}

std::vector<int> padded_dims(const Shape& global, const Layout& layout, const Mesh& mesh,
                             const std::vector<int>& dims) {
  std::vector<int> out;
  for (int d : dims) {
    const auto i = static_cast<size_t>(d);
    if (global[i] % axes_size(layout.dims[i], mesh) != 0) out.push_back(d);
  }
  return out;
}

std::vector<std::string> axis_names(const std::vector<int>& axes, const Mesh& mesh) {
  std::vector<std::string> names;
  names.reserve(axes.size());
  for (int a : axes) names.push_back(mesh.axis_names()[static_cast<size_t>(a)]);
  return names;
}

}  // namespace spmd::compiler
