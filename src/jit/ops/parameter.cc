// The given-layout family (parameter.h).
#include "jit/ops/parameter.h"

#include <fmt/format.h>

#include <algorithm>

#include "jit/batching.h"
#include "jit/lax.h"
#include "jit/op_registry.h"
#include "jit/partitioner.h"
#include "jit/sharding_in_types.h"
#include "spmd/error.h"
#include "spmd/jit.h"

namespace spmd::compiler {

std::string ParameterOp::attributes() const {
  return fmt::format("index={} sharding={}", index, sharding_->spec().to_string());
}

ValueType ParameterOp::result_type(std::span<const ValueType> operands) const {
  check_operand_count("parameter", operands, 0);
  return type;
}

PartitionSpec ParameterOp::type_spec(std::span<const ValueType> /*operands*/,
                                     const ValueType& result, const Mesh& mesh) const {
  return explicit_part(sharding_->spec(), mesh, result.shape.size());
}

void ParameterOp::partition(Partitioner& /*p*/, int /*value*/, const Op& /*op*/) const {
  // Defined from the inputs before the rules run (partition.cc).
}

Block ParameterOp::run(const KernelContext& /*device*/, const Step& /*step*/,
                       std::span<const Block> /*in*/) const {
  throw InvalidArgument("parameter: defined from the inputs, not computed");
}

std::string ConstraintOp::attributes() const { return "sharding=" + sharding_->spec().to_string(); }

ValueType ConstraintOp::result_type(std::span<const ValueType> operands) const {
  check_operand_count("sharding_constraint", operands, 1);
  layout_of(*sharding_, operands[0].shape.size());  // throws for a spec of too many entries
  return operands[0];
}

PartitionSpec ConstraintOp::type_spec(std::span<const ValueType> operands, const ValueType& result,
                                      const Mesh& mesh) const {
  const size_t rank = result.shape.size();
  if (kind == Kind::kReshard) return explicit_part(sharding_->spec(), mesh, rank);
  const bool all_explicit = std::all_of(mesh.axis_types().begin(), mesh.axis_types().end(),
                                        [](AxisType t) { return t == AxisType::kExplicit; });
  const PartitionSpec asked = explicit_part(sharding_->spec(), mesh, rank);
  if (all_explicit && !(asked == operands[0].spec)) {
    throw ShardingTypeError(fmt::format(
        "with_sharding_constraint: on a mesh whose axes are all Explicit it asserts the type, "
        "but the operand is {} and the constraint asks {}. Use reshard (jax.sharding.reshard) to "
        "move it",
        typed_text(operands[0]), sharding_->spec().to_string()));
  }
  if (!all_explicit && !asked.entries().empty()) {
    throw ShardingTypeError(fmt::format(
        "with_sharding_constraint: {} names Explicit axes of {}; a constraint may only place "
        "Auto ones (the operand is {}). Use reshard (jax.sharding.reshard) to change its type",
        sharding_->spec().to_string(), mesh.to_string(), typed_text(operands[0])));
  }
  return operands[0].spec;
}

void ConstraintOp::partition(Partitioner& p, int value, const Op& op) const {
  const Layout want = held_layout(layout_of(*sharding_, op.shape.size()), op.spec, p.mesh());
  p.define(value, p.slot_with(op.inputs[0], want), want);
}

std::optional<Layout> ConstraintOp::operand_hint(const Op& op, const Shape& /*operand*/,
                                                 const Layout* /*result*/) const {
  return layout_of(*sharding_, op.shape.size());
}

std::optional<FactorRule> ConstraintOp::factor_rule(std::span<const ValueType> operands,
                                                    const ValueType& result) const {
  return FactorRule::pointwise(operands, result);
}

Block ConstraintOp::run(const KernelContext& /*device*/, const Step& /*step*/,
                        std::span<const Block> in) const {
  return in[0];
}

Cotangents ConstraintOp::vjp(const Op& /*op*/, const Tensor& /*result*/,
                             std::span<const Tensor> operands, const Tensor& g) const {
  if (kind == Kind::kReshard) return {reshard(g, operands[0].sharding())};
  return {spmd::lax::with_sharding_constraint(g, *sharding_)};
}

Batched ConstraintOp::batch(const Op& /*op*/, std::span<const Batched> operands,
                            int64_t /*size*/) const {
  const Batched& x = operands[0];
  std::vector<AxisEntry> entries = sharding_->spec().entries();
  const auto at = static_cast<size_t>(*x.dim);
  if (at <= entries.size()) entries.insert(entries.begin() + *x.dim, AxisEntry());
  auto sharding = std::make_shared<const NamedSharding>(sharding_->mesh(),
                                                        PartitionSpec::from_entries(entries));
  return {lax::bind(make_operation<ConstraintOp>(std::move(sharding), kind), {x.value}), x.dim};
}

namespace {

std::shared_ptr<const NamedSharding> on_mesh(const AttributeReader& r) {
  return std::make_shared<const NamedSharding>(r.mesh(), r.spec("sharding"));
}

const bool parameter_registered = [] {
  register_operation("parameter", [](const AttributeReader& r) {
    return make_operation<ParameterOp>(static_cast<int>(r.integer("index")), r.result(),
                                       on_mesh(r));
  });
  register_operation("sharding_constraint", [](const AttributeReader& r) {
    return make_operation<ConstraintOp>(on_mesh(r));
  });
  register_operation("reshard", [](const AttributeReader& r) {
    return make_operation<ConstraintOp>(on_mesh(r), ConstraintOp::Kind::kReshard);
  });
  return true;
}();

}  // namespace
}  // namespace spmd::compiler
