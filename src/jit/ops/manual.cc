// The manual family (manual.h).
#include "jit/ops/manual.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "jit/batching.h"
#include "jit/lax.h"
#include "jit/layout.h"
#include "jit/manual.h"
#include "jit/op_registry.h"
#include "jit/partitioner.h"
#include "jit/sharding_in_types.h"
#include "spmd/error.h"

namespace spmd::compiler {
std::string ManualBoundary::attributes() const {
  return "spec=" + sharding_->spec().to_string() + (check_vma_ ? "" : " check_vma=false");
}

Block ManualBoundary::run(const KernelContext& /*device*/, const Step& /*step*/,
                          std::span<const Block> in) const {
  return in[0];
}

ValueType ManualInOp::result_type(std::span<const ValueType> operands) const {
  check_operand_count("shard_map_in", operands, 1);
  const ValueType& in = operands[0];
  const Layout layout = layout_of(*sharding_, in.shape.size());
  return {in.dtype, even_local_shape(in.shape, layout, sharding_->mesh(), "a shard_map argument")};
}

PartitionSpec ManualInOp::type_spec(std::span<const ValueType> /*operands*/,
                                    const ValueType& /*result*/, const Mesh& /*mesh*/) const {
  return {};
}

PartitionSpec ManualOutOp::type_spec(std::span<const ValueType> /*operands*/,
                                     const ValueType& result, const Mesh& mesh) const {
  return explicit_part(sharding_->spec(), mesh, result.shape.size());
}

void ManualInOp::partition(Partitioner& p, int value, const Op& op) const {
  p.define(value, p.slot_with(op.inputs[0], layout_of(*sharding_, p.op(op.inputs[0]).shape.size())),
           Layout::replicated(op.shape.size()));
}

namespace {

// The mesh axes a boundary's spec leaves out (every axis is manual: traced_shard_map.cc refuses
// check_vma = false with a narrower axis_names).
std::vector<int> unmentioned(const NamedSharding& sharding, size_t rank) {
  const uint64_t used = axis_bits(layout_of(sharding, rank).used_axes());
  std::vector<int> out;
  for (int a = 0; a < static_cast<int>(sharding.mesh().axis_names().size()); ++a) {
    if ((used & (1ull << a)) == 0) out.push_back(a);
  }
  return out;
}

}  // namespace

Cotangents ManualInOp::vjp(const Op& op, const Tensor& /*result*/,
                           std::span<const Tensor> /*operands*/, const Tensor& g) const {
  // Unchecked (JAX's transpose without check_vma): the devices' cotangents of an argument the
  // spec does not split are summed over the axes it leaves out.
  const Tensor block =
      check_vma_ ? g : axis_sum(g, sharding_->mesh(), unmentioned(*sharding_, op.shape.size()));
  return {manual_out(block, sharding_->mesh(), sharding_->spec(), check_vma_)};
}

ValueType ManualOutOp::result_type(std::span<const ValueType> operands) const {
  check_operand_count("shard_map_out", operands, 1);
  const ValueType& block = operands[0];
  const Layout layout = layout_of(*sharding_, block.shape.size());
  Shape global = block.shape;
  for (size_t d = 0; d < global.size(); ++d)
    global[d] *= axes_size(layout.dims[d], sharding_->mesh());
  return {block.dtype, global};
}

void ManualOutOp::partition(Partitioner& p, int value, const Op& op) const {
  p.define(value, p.slot_with(op.inputs[0], Layout::replicated(p.op(op.inputs[0]).shape.size())),
           layout_of(*sharding_, op.shape.size()));
}

Cotangents ManualOutOp::vjp(const Op& op, const Tensor& /*result*/,
                            std::span<const Tensor> /*operands*/, const Tensor& g) const {
  const Tensor block = manual_in(g, sharding_->mesh(), sharding_->spec(), check_vma_);
  if (check_vma_) return {block};
  // Unchecked: a result the spec leaves whole along some axes was one device's of as many
  // copies; JAX divides its cotangent by their number.
  const int64_t copies = axes_size(unmentioned(*sharding_, op.shape.size()), sharding_->mesh());
  return {copies == 1 ? block : block / static_cast<double>(copies)};
}

std::string AxisReduceOp::name() const {
  switch (kind) {
    case Kind::kSum:
      return "psum";
    case Kind::kMax:
      return "pmax";
    case Kind::kMin:
      return "pmin";
  }
  return "psum";
}

std::string AxisReduceOp::attributes() const {
  return fmt::format("axes={{{}}}", fmt::join(axes, ","));
}

ValueType AxisReduceOp::result_type(std::span<const ValueType> operands) const {
  check_operand_count(name(), operands, 1);
  const ValueType& in = operands[0];
  for (int a : axes) {
    if (a < 0 || a >= static_cast<int>(mesh->axis_names().size()))
      throw InvalidArgument(fmt::format("{}: the mesh has no axis {}", name(), a));
  }
  return in;
}

void AxisReduceOp::partition(Partitioner& p, int value, const Op& op) const {
  const Layout blocks = Layout::replicated(op.shape.size());
  const StepKind step = kind == Kind::kSum   ? StepKind::kPsum
                        : kind == Kind::kMax ? StepKind::kPmax
                                             : StepKind::kPmin;
  p.define(value, p.emit_collective(step, p.slot_with(op.inputs[0], blocks), value, blocks, axes),
           blocks);
}

Block AxisReduceOp::run(const KernelContext& /*device*/, const Step& /*step*/,
                        std::span<const Block> /*in*/) const {
  throw InvalidArgument(name() + " runs as a collective step, not a kernel");
}

Cotangents AxisReduceOp::vjp(const Op& op, const Tensor& result, std::span<const Tensor> operands,
                             const Tensor& g) const {
  if (kind != Kind::kSum) return Operation::vjp(op, result, operands, g);
  return {g};
}

Batched AxisReduceOp::batch(const Op& op, std::span<const Batched> operands,
                            int64_t /*size*/) const {
  return {lax::bind(op.operation, {operands[0].value}), operands[0].dim};
}

Batched ManualBoundary::batch(const Op& /*op*/, std::span<const Batched> /*operands*/,
                              int64_t /*size*/) const {
  throw InvalidArgument(
      "vmap: a shard_map inside a vmapped function is not supported; apply vmap inside the "
      "shard_map's body instead");
}

namespace {

std::shared_ptr<const NamedSharding> spec_on_mesh(const AttributeReader& r) {
  return std::make_shared<const NamedSharding>(r.mesh(), r.spec("spec"));
}

void register_reduce(const char* name, AxisReduceOp::Kind kind) {
  register_operation(name, [kind](const AttributeReader& r) {
    const std::vector<int64_t> axes = r.integers("axes");
    return make_operation<AxisReduceOp>(kind, std::make_shared<const Mesh>(r.mesh()),
                                        std::vector<int>(axes.begin(), axes.end()));
  });
}

const bool manual_registered = [] {
  register_operation("shard_map_in", [](const AttributeReader& r) {
    return make_operation<ManualInOp>(spec_on_mesh(r), r.boolean("check_vma", true));
  });
  register_operation("shard_map_out", [](const AttributeReader& r) {
    return make_operation<ManualOutOp>(spec_on_mesh(r), r.boolean("check_vma", true));
  });
  register_reduce("psum", AxisReduceOp::Kind::kSum);
  register_reduce("pmax", AxisReduceOp::Kind::kMax);
  register_reduce("pmin", AxisReduceOp::Kind::kMin);
  return true;
}();

}  // namespace
}  // namespace spmd::compiler
