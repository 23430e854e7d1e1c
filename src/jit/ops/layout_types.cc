// The layout family's sharding-in-types rules (layout.h), JAX's: broadcast_in_dim, reshape (its
// split-one-axis and merge-one-axis cases), transpose, slice and concatenate.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <optional>

#include "jit/ops/layout.h"
#include "jit/sharding_in_types.h"
#include "spmd/error.h"

namespace spmd::compiler {
namespace {

// Per dimension of the longer shape, one size (`group` empty) or the sizes of the shorter
// shape's dimensions it stands for.
struct Group {
  int64_t size = 0;
  std::vector<int64_t> group;
};

int64_t product(const std::vector<int64_t>& v) {
  int64_t n = 1;
  for (int64_t x : v) n *= x;
  return n;
}

// How `from` becomes the longer `to` by splitting exactly one of its dimensions into several
// (trailing size-1 dimensions common to both aside): one Group per dimension of `from`. JAX's
// _split_on_one_axis; nullopt where it is no such split, and `ambiguous` set where it splits more
// than one.
std::optional<std::vector<Group>> split_on_one_axis(Shape from, Shape to, bool& ambiguous) {
  if (to.size() <= from.size()) return std::nullopt;
  size_t ones = 0;
  while (!from.empty() && !to.empty() && from.back() == 1 && to.back() == 1) {
    ++ones;
    from.pop_back();
    to.pop_back();
  }
  std::vector<Group> out;
  int splits = 0;
  for (size_t i = 0, j = 0; j < to.size(); ++i, ++j) {
    if (i >= from.size()) return std::nullopt;
    if (from[i] == to[j]) {
      out.push_back({from[i], {}});
      continue;
    }
    if (++splits > 1) {
      ambiguous = true;
      return std::nullopt;
    }
    std::vector<int64_t> parts{to[j]};
    size_t next_j = j + 1;
    while (product(parts) != from[i] || (next_j < to.size() && to[next_j] == 1)) {
      if (product(parts) > from[i]) return std::nullopt;
      if (product(parts) == from[i] && i + 1 < from.size() && next_j < to.size() &&
          to[next_j] == from[i + 1]) {
        break;
      }
      if (++j >= to.size()) return std::nullopt;
      parts.push_back(to[j]);
      ++next_j;
    }
    out.push_back({0, std::move(parts)});
  }
  for (size_t k = 0; k < ones; ++k) out.push_back({1, {}});
  return out;
}

[[noreturn]] void refuse_reshape(const ValueType& in, const Shape& to) {
  throw ShardingTypeError(fmt::format(
      "reshape of {} to ({}): this reshape of a split dimension is not supported, the result's "
      "split would be ambiguous. Reshard the operand first (reshard: jax.sharding.reshard) so that "
      "the "
      "dimensions it merges or splits are whole",
      typed_text(in), fmt::join(to, ",")));
}

// The axes of one split entry dealt out over dimensions of `sizes`, major first, each axis
// dividing what is left of its dimension (JAX's split_partitions).
std::vector<AxisEntry> deal_axes(const std::vector<std::string>& axes,
                                 const std::vector<int64_t>& sizes, const Mesh& mesh,
                                 const ValueType& in, const Shape& to) {
  size_t next = 0;
  std::vector<AxisEntry> out;
  for (int64_t size : sizes) {
    std::vector<std::string> here;
    while (size > 1 && next < axes.size()) {
      const int64_t n = mesh.axis_size(axes[next]);
      if (size % n != 0) refuse_reshape(in, to);
      size /= n;
      here.push_back(axes[next++]);
    }
    out.emplace_back(std::move(here));
  }
  if (next != axes.size()) refuse_reshape(in, to);
  return out;
}

std::vector<AxisEntry> split_one(const ValueType& in, const std::vector<Group>& groups,
                                 const Mesh& mesh, const Shape& to) {
  const std::vector<AxisEntry> entries = type_entries(in);
  std::vector<AxisEntry> out;
  for (size_t d = 0; d < groups.size(); ++d) {
    if (groups[d].group.empty()) {
      out.push_back(entries[d]);
      continue;
    }
    std::vector<AxisEntry> dealt(groups[d].group.size());
    if (!entries[d].is_none()) dealt = deal_axes(entries[d].axes(), groups[d].group, mesh, in, to);
    out.insert(out.end(), dealt.begin(), dealt.end());
  }
  return out;
}

std::vector<AxisEntry> merge_one(const ValueType& in, const std::vector<Group>& groups,
                                 const Mesh& mesh, const Shape& to) {
  const std::vector<AxisEntry> entries = type_entries(in);
  std::vector<AxisEntry> out;
  size_t next = 0;
  for (size_t d = 0; d < groups.size(); ++d) {
    if (groups[d].group.empty()) {
      out.push_back(entries[next++]);
      continue;
    }
    // The merged entries' axes in order; a whole dimension may only trail the split ones.
    std::vector<std::string> axes;
    bool whole_seen = false;
    for (size_t k = 0; k < groups[d].group.size(); ++k, ++next) {
      if (entries[next].is_none()) {
        whole_seen = true;
        continue;
      }
      if (whole_seen) refuse_reshape(in, to);
      axes.insert(axes.end(), entries[next].axes().begin(), entries[next].axes().end());
    }
    out.push_back(axes.empty() ? AxisEntry() : deal_axes(axes, {to[d]}, mesh, in, to).front());
  }
  return out;
}

// Through size-1 dimensions only: the entries of the other dimensions in order.
std::vector<AxisEntry> through_ones(const ValueType& in, const Shape& to) {
  std::vector<AxisEntry> kept;
  const std::vector<AxisEntry> entries = type_entries(in);
  for (size_t d = 0; d < in.shape.size(); ++d) {
    if (in.shape[d] != 1) kept.push_back(entries[d]);
  }
  std::vector<AxisEntry> out;
  size_t next = 0;
  for (int64_t size : to) out.push_back(size == 1 ? AxisEntry() : kept[next++]);
  return out;
}

Shape without_ones(const Shape& s) {
  Shape out;
  for (int64_t d : s) {
    if (d != 1) out.push_back(d);
  }
  return out;
}

}  // namespace

PartitionSpec BroadcastOp::type_spec(std::span<const ValueType> operands, const ValueType& result,
                                     const Mesh& /*mesh*/) const {
  const std::vector<AxisEntry> in = type_entries(operands[0]);
  std::vector<AxisEntry> out(result.shape.size());
  const size_t offset = out.size() - in.size();
  for (size_t d = 0; d < in.size(); ++d) out[d + offset] = in[d];
  return canonical_spec(std::move(out));
}

PartitionSpec ReshapeOp::type_spec(std::span<const ValueType> operands, const ValueType& result,
                                   const Mesh& mesh) const {
  const ValueType& in = operands[0];
  if (in.spec.entries().empty()) return {};
  if (without_ones(in.shape) == without_ones(result.shape))
    return canonical_spec(through_ones(in, result.shape));
  bool ambiguous = false;
  if (auto groups = split_on_one_axis(in.shape, result.shape, ambiguous)) {
    return canonical_spec(split_one(in, *groups, mesh, result.shape));
  }
  if (!ambiguous) {
    if (auto groups = split_on_one_axis(result.shape, in.shape, ambiguous)) {
      return canonical_spec(merge_one(in, *groups, mesh, result.shape));
    }
  }
  refuse_reshape(in, result.shape);
}

PartitionSpec TransposeOp::type_spec(std::span<const ValueType> operands,
                                     const ValueType& /*result*/, const Mesh& /*mesh*/) const {
  const std::vector<AxisEntry> in = type_entries(operands[0]);
  std::vector<AxisEntry> out;
  for (int64_t d : permutation) out.push_back(in[static_cast<size_t>(d)]);
  return canonical_spec(std::move(out));
}

PartitionSpec SliceOp::type_spec(std::span<const ValueType> operands, const ValueType& result,
                                 const Mesh& mesh) const {
  const ValueType& in = operands[0];
  const std::vector<AxisEntry> entries = type_entries(in);
  for (size_t d = 0; d < entries.size(); ++d) {
    int64_t parts = 1;
    for (const std::string& axis : entries[d].axes()) parts *= mesh.axis_size(axis);
    if (result.shape[d] == in.shape[d] || result.shape[d] % parts == 0) continue;
    throw ShardingTypeError(fmt::format(
        "slice of {} to ({}): dimension {} becomes {}, which its {} devices do not divide "
        "(slicing on sharded dims where out dim is not divisible). Reshard the operand first "
        "(reshard: jax.sharding.reshard) so that dimension {} is whole",
        typed_text(in), fmt::join(result.shape, ","), d, result.shape[d], parts, d));
  }
  return in.spec;
}

PartitionSpec StridedSliceOp::type_spec(std::span<const ValueType> operands,
                                        const ValueType& result, const Mesh& mesh) const {
  const ValueType& in = operands[0];
  const std::vector<AxisEntry> entries = type_entries(in);
  for (size_t d = 0; d < entries.size(); ++d) {
    int64_t parts = 1;
    for (const std::string& axis : entries[d].axes()) parts *= mesh.axis_size(axis);
    if (result.shape[d] == in.shape[d] || result.shape[d] % parts == 0) continue;
    throw ShardingTypeError(fmt::format(
        "strided slice of {} to ({}): dimension {} becomes {}, which its {} devices do not "
        "divide. Reshard the operand first (reshard: jax.sharding.reshard) so that dimension {} "
        "is whole",
        typed_text(in), fmt::join(result.shape, ","), d, result.shape[d], parts, d));
  }
  return in.spec;
}

PartitionSpec ConcatenateOp::type_spec(std::span<const ValueType> operands,
                                       const ValueType& /*result*/, const Mesh& /*mesh*/) const {
  return same_type_spec("concatenate", operands);
}

}  // namespace spmd::compiler
