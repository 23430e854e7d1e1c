// Sharding in types, JAX's explicit sharding: on a mesh with Explicit axes (AxisType::kExplicit,
// make_mesh's default), every traced value's type says which Explicit axes split each of its
// dimensions (ValueType::spec, Tensor::sharding()), each operation's type_spec rule
// (operation.h) gives its result's from its operands' as JAX's sharding rules do, and the
// partitioner holds every value to its type. Auto axes are not in types: propagation places
// them as before. The helpers here are what the rules and the partitioner share. Private to
// src/jit/.
// Open to lib/: out_sharding= checked as JAX checks it, and the type rules of a library's
// operations.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "jit/layout.h"
#include "jit/operation.h"
#include "spmd/mesh.h"
#include "spmd/tensor.h"

namespace spmd::compiler {

// True when some axis of `mesh` is Explicit: only then do types carry a spec.
bool has_explicit_axes(const Mesh& mesh);

// The entries of `type`'s spec, one per dimension (all None when the spec is empty).
std::vector<AxisEntry> type_entries(const ValueType& type);
// `entries` as a canonical type spec: empty when every entry is None.
PartitionSpec canonical_spec(std::vector<AxisEntry> entries);
// The Explicit axes of `spec` for an array of rank `rank`, canonical (JAX's
// modify_spec_for_auto_manual): the type of a value laid out as NamedSharding(mesh, spec).
PartitionSpec explicit_part(const PartitionSpec& spec, const Mesh& mesh, size_t rank);
// `spec` without its Explicit axes (what a constraint may still ask on a mixed mesh).
PartitionSpec auto_part(const PartitionSpec& spec, const Mesh& mesh);

// An out_sharding= or reshard spec for a result of rank `rank`, checked: at most `rank` entries,
// axes of `mesh`, each used once, and none Auto or Manual (JAX refuses those in a type). Returns
// it canonical; throws InvalidArgument naming `what`.
PartitionSpec checked_type_spec(std::string_view what, const PartitionSpec& spec, const Mesh& mesh,
                                size_t rank);

// JAX's short type with its splits, "f32[8@x,16]" ("@(x,y)" for two axes), for messages.
std::string typed_text(const ValueType& type);
// "f32[8@x,16], f32[16,4@y]".
std::string typed_list(std::span<const ValueType> types);

// The result's type: the operation's shape and dtype rule, then, on a `mesh` with Explicit axes
// (null: none), its type_spec rule. Throws ShardingTypeError from the rule, or when the spec
// splits two dimensions over one axis (JAX's "illegally sharded result").
ValueType typed_result(const Operation& operation, std::span<const ValueType> operands,
                       const Mesh* mesh);

// The layout the partitioner holds a value of type spec `spec` to, given the layout its rule
// gave it (`natural`): the type's Explicit axes on each dimension (major), then `natural`'s other
// axes, and a pending sum only over axes that are not Explicit.
Layout held_layout(const Layout& natural, const PartitionSpec& spec, const Mesh& mesh);

// JAX's broadcasting rule, the element-wise family's: per dimension, the operands' common entry,
// or the one entry among them that is not None (ignoring size-1 dimensions); rank-0 operands
// take no part. Throws ShardingTypeError naming `name` when two operands split a dimension
// differently.
PartitionSpec broadcast_type_spec(std::string_view name, std::span<const ValueType> operands,
                                  size_t rank);

// Throws ShardingTypeError naming `name` when `operands` of rank > 0 have specs that differ
// (JAX's rule for concatenate and select: all operands split alike); returns their spec.
PartitionSpec same_type_spec(std::string_view name, std::span<const ValueType> operands);

// `x` with type spec `spec` (a "reshard" where its own differs, on a mesh with Explicit axes): a
// cotangent typed as its primal, as JAX's transpose rules type theirs.
Tensor retyped(const Tensor& x, const PartitionSpec& spec);
// `x` constrained to `sharding`'s Auto axes only (the type holds the Explicit ones): how the
// compiler's own constraints (zeros_like of a jit input, laid out as the input) stay within what
// a constraint may ask on a mesh with Explicit axes. `x` itself when that leaves nothing to ask on
// such a mesh.
Tensor constrained_auto(const Tensor& x, const NamedSharding& sharding);

}  // namespace spmd::compiler
