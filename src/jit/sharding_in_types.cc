// Sharding in types' shared pieces (sharding_in_types.h).
#include "jit/sharding_in_types.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <set>

#include "jit/ops/parameter.h"
#include "jit/program.h"
#include "jit/trace.h"
#include "spmd/error.h"
#include "spmd/jit.h"

namespace spmd::compiler {
namespace {

bool is_explicit(const Mesh& mesh, const std::string& axis) {
  return mesh.axis_types()[static_cast<size_t>(mesh.axis_index(axis))] == AxisType::kExplicit;
}

// The entry with only the axes `keep` accepts.
template <class Keep>
AxisEntry filtered(const AxisEntry& e, Keep keep) {
  std::vector<std::string> axes;
  for (const std::string& a : e.axes()) {
    if (keep(a)) axes.push_back(a);
  }
  return AxisEntry(std::move(axes));
}

std::string entry_text(const AxisEntry& e) {
  if (e.axes().size() == 1) return e.axes().front();
  return fmt::format("({})", fmt::join(e.axes(), ","));
}

// "('x', None)": the entries as JAX prints a spec's partitions in its messages.
std::string entries_text(const std::vector<AxisEntry>& entries) {
  std::string parts;
  for (const AxisEntry& e : entries) {
    if (!parts.empty()) parts += ", ";
    parts += e.is_none() ? "None" : fmt::format("'{}'", entry_text(e));
  }
  return "(" + parts + ")";
}

}  // namespace

bool has_explicit_axes(const Mesh& mesh) {
  return std::any_of(mesh.axis_types().begin(), mesh.axis_types().end(),
                     [](AxisType t) { return t == AxisType::kExplicit; });
}

std::vector<AxisEntry> type_entries(const ValueType& type) {
  std::vector<AxisEntry> entries = type.spec.entries();
  entries.resize(std::max(entries.size(), type.shape.size()));
  return entries;
}

PartitionSpec canonical_spec(std::vector<AxisEntry> entries) {
  const bool none = std::all_of(entries.begin(), entries.end(),
                                [](const AxisEntry& e) { return e.axes().empty(); });
  if (none) return {};
  for (AxisEntry& e : entries) {
    if (e.axes().empty()) e = AxisEntry();
  }
  return PartitionSpec::from_entries(std::move(entries));
}

PartitionSpec explicit_part(const PartitionSpec& spec, const Mesh& mesh, size_t rank) {
  std::vector<AxisEntry> entries(rank);
  for (size_t d = 0; d < spec.size() && d < rank; ++d) {
    entries[d] =
        filtered(spec.entries()[d], [&](const std::string& a) { return is_explicit(mesh, a); });
  }
  return canonical_spec(std::move(entries));
}

PartitionSpec auto_part(const PartitionSpec& spec, const Mesh& mesh) {
  std::vector<AxisEntry> entries;
  for (const AxisEntry& e : spec.entries()) {
    entries.push_back(filtered(e, [&](const std::string& a) { return !is_explicit(mesh, a); }));
  }
  return canonical_spec(std::move(entries));
}

PartitionSpec checked_type_spec(std::string_view what, const PartitionSpec& spec, const Mesh& mesh,
                                size_t rank) {
  if (spec.size() > rank) {
    throw InvalidArgument(fmt::format("{}: out sharding {} has {} entries for a result of rank {}",
                                      what, spec.to_string(), spec.size(), rank));
  }
  std::set<std::string> seen;
  for (const std::string& axis : spec.axes()) {
    if (!seen.insert(axis).second) {
      throw InvalidArgument(
          fmt::format("{}: out sharding {} names axis '{}' twice", what, spec.to_string(), axis));
    }
    mesh.axis_index(axis);  // throws for an axis the mesh lacks
    if (!is_explicit(mesh, axis)) {
      throw InvalidArgument(fmt::format(
          "{}: out sharding {} names axis '{}', which is {} on {}; a type holds Explicit axes "
          "only (place Auto axes with with_sharding_constraint)",
          what, spec.to_string(), axis,
          axis_type_name(mesh.axis_types()[static_cast<size_t>(mesh.axis_index(axis))]),
          mesh.to_string()));
    }
  }
  return explicit_part(spec, mesh, rank);
}

std::string typed_text(const ValueType& type) {
  const std::vector<AxisEntry> entries = type_entries(type);
  std::vector<std::string> dims;
  for (size_t d = 0; d < type.shape.size(); ++d) {
    dims.push_back(entries[d].is_none()
                       ? std::to_string(type.shape[d])
                       : fmt::format("{}@{}", type.shape[d], entry_text(entries[d])));
  }
  return fmt::format("{}[{}]", short_dtype_name(type.dtype), fmt::join(dims, ","));
}

std::string typed_list(std::span<const ValueType> types) {
  std::vector<std::string> parts;
  for (const ValueType& t : types) parts.push_back(typed_text(t));
  return fmt::format("{}", fmt::join(parts, ", "));
}

ValueType typed_result(const Operation& operation, std::span<const ValueType> operands,
                       const Mesh* mesh) {
  ValueType t = operation.result_type(operands);
  t.spec = {};
  if (mesh == nullptr || !has_explicit_axes(*mesh)) return t;
  PartitionSpec spec = operation.type_spec(operands, t, *mesh);
  if (!spec.entries().empty() && spec.size() != t.shape.size()) {
    throw InvalidArgument(fmt::format("{}: its sharding rule gives {} for a result of rank {}",
                                      operation.name(), spec.to_string(), t.shape.size()));
  }
  std::set<std::string> seen;
  for (const std::string& axis : spec.axes()) {
    if (seen.insert(axis).second) continue;
    ValueType shown = t;
    shown.spec = spec;
    throw ShardingTypeError(fmt::format(
        "{}: operands {} give an illegally sharded result {}: mesh axis '{}' would split two "
        "of its dimensions. Give the result's sharding (out_sharding=) or reshard an operand "
        "(reshard: jax.sharding.reshard)",
        operation.name(), typed_list(operands), typed_text(shown), axis));
  }
  t.spec = std::move(spec);
  return t;
}

Layout held_layout(const Layout& natural, const PartitionSpec& spec, const Mesh& mesh) {
  auto explicit_axis = [&](int a) {
    return mesh.axis_types()[static_cast<size_t>(a)] == AxisType::kExplicit;
  };
  Layout held = natural;
  std::erase_if(held.partial, explicit_axis);
  for (size_t d = 0; d < held.dims.size(); ++d) {
    std::vector<int> axes;
    if (d < spec.size()) {
      for (const std::string& name : spec.entries()[d].axes())
        axes.push_back(mesh.axis_index(name));
    }
    for (int a : held.dims[d]) {
      if (!explicit_axis(a)) axes.push_back(a);
    }
    held.dims[d] = std::move(axes);
  }
  return held;
}

PartitionSpec broadcast_type_spec(std::string_view name, std::span<const ValueType> operands,
                                  size_t rank) {
  std::vector<AxisEntry> out(rank);
  for (size_t d = 0; d < rank; ++d) {
    const AxisEntry* chosen = nullptr;
    for (const ValueType& t : operands) {
      if (t.shape.size() != rank) continue;  // rank 0: a scalar for every element
      const AxisEntry e = type_entries(t)[d];
      if (e.is_none()) continue;
      if (chosen != nullptr && !(*chosen == e)) {
        std::vector<std::string> specs;
        for (const ValueType& o : operands) {
          if (o.shape.size() == rank) specs.push_back(entries_text(type_entries(o)));
        }
        throw ShardingTypeError(fmt::format(
            "{}: operands {} are split differently along dimension {} (got incompatible "
            "shardings for broadcasting: {}). Reshard one of them (reshard: jax.sharding.reshard) "
            "to the "
            "other's spec",
            name, typed_list(operands), d, fmt::join(specs, ", ")));
      }
      out[d] = e;
      chosen = &out[d];
    }
  }
  return canonical_spec(std::move(out));
}

PartitionSpec same_type_spec(std::string_view name, std::span<const ValueType> operands) {
  const ValueType* first = nullptr;
  for (const ValueType& t : operands) {
    if (t.shape.empty()) continue;
    if (first != nullptr && !(first->spec == t.spec)) {
      throw ShardingTypeError(fmt::format(
          "{}: operands {} are split differently; all of them must have the same sharding. "
          "Reshard them (reshard: jax.sharding.reshard) to one spec",
          name, typed_list(operands)));
    }
    if (first == nullptr) first = &t;
  }
  return first == nullptr ? PartitionSpec() : first->spec;
}

Tensor retyped(const Tensor& x, const PartitionSpec& spec) {
  auto trace = trace_of("reshard", {&x});
  const Mesh* mesh = trace->mesh();
  if (mesh == nullptr || !has_explicit_axes(*mesh) || trace->op(x.value()).spec == spec) return x;
  return trace->apply(
      make_operation<ConstraintOp>(std::make_shared<const NamedSharding>(*mesh, spec),
                                   ConstraintOp::Kind::kReshard),
      {x.value()});
}

Tensor constrained_auto(const Tensor& x, const NamedSharding& sharding) {
  auto trace = trace_of("with_sharding_constraint", {&x});
  const Mesh* mesh = trace->mesh();
  if (mesh == nullptr || !has_explicit_axes(*mesh)) {
    return spmd::lax::with_sharding_constraint(x, sharding);
  }
  const PartitionSpec rest = auto_part(sharding.spec(), sharding.mesh());
  if (rest.entries().empty()) return x;
  return spmd::lax::with_sharding_constraint(x, NamedSharding(sharding.mesh(), rest));
}

}  // namespace spmd::compiler
