// The given-layout family (parameter.h).
#include "jit/ops/parameter.h"

#include <fmt/format.h>

#include "jit/batching.h"
#include "jit/op_registry.h"
#include "jit/partitioner.h"
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

void ConstraintOp::partition(Partitioner& p, int value, const Op& op) const {
  const Layout want = layout_of(*sharding_, op.shape.size());
  p.define(value, p.slot_with(op.inputs[0], want), want);
}

std::optional<Layout> ConstraintOp::operand_hint(const Op& op, const Shape& /*operand*/,
                                                 const Layout* /*result*/) const {
  return layout_of(*sharding_, op.shape.size());
}

Block ConstraintOp::run(const KernelContext& /*device*/, const Step& /*step*/,
                        std::span<const Block> in) const {
  return in[0];
}

Cotangents ConstraintOp::vjp(const Op& /*op*/, const Tensor& /*result*/,
                             std::span<const Tensor> /*operands*/, const Tensor& g) const {
  return {lax::with_sharding_constraint(g, *sharding_)};
}

Batched ConstraintOp::batch(const Op& /*op*/, std::span<const Batched> operands,
                            int64_t /*size*/) const {
  const Batched& x = operands[0];
  std::vector<AxisEntry> entries = sharding_->spec().entries();
  const auto at = static_cast<size_t>(*x.dim);
  if (at <= entries.size()) entries.insert(entries.begin() + *x.dim, AxisEntry());
  auto sharding = std::make_shared<const NamedSharding>(sharding_->mesh(),
                                                        PartitionSpec::from_entries(entries));
  return {compiler::apply(make_operation<ConstraintOp>(std::move(sharding)), {x.value}), x.dim};
}

namespace {

std::shared_ptr<const NamedSharding> on_mesh(const AttributeReader& r) {
  return std::make_shared<const NamedSharding>(r.mesh(), r.spec("sharding"));
}

const bool registered = [] {
  register_operation("parameter", [](const AttributeReader& r) {
    return make_operation<ParameterOp>(static_cast<int>(r.integer("index")), r.result(),
                                       on_mesh(r));
  });
  register_operation("sharding_constraint", [](const AttributeReader& r) {
    return make_operation<ConstraintOp>(on_mesh(r));
  });
  return true;
}();

}  // namespace
}  // namespace spmd::compiler
