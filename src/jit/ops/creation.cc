// The creation family: values made from nothing but their attributes. They are replicated (every
// device makes the whole value) and have no derivative to pass on. Full and iota take an
// out_sharding (jnp.zeros(…, out_sharding=)): the spec in their `type`, Explicit axes only, which
// becomes the result's type on a mesh with Explicit axes (each device then keeps its block).
#include <fmt/format.h>
#include <xxhash.h>

#include <algorithm>
#include <memory>

#include "jit/lax.h"
#include "jit/op_registry.h"
#include "jit/operation.h"
#include "jit/ops/parameter.h"
#include "jit/partitioner.h"
#include "jit/sharding_in_types.h"
#include "jit/trace.h"
#include "spmd/error.h"
#include "spmd/host_array.h"

namespace spmd::compiler {

// The family's shared sharding rule: every device makes the whole value.
class CreationOperation : public Operation {
 public:
  void partition(Partitioner& p, int value, const Op& op) const final;
  bool same_at_every_call() const final { return true; }
  // Another of the same name and attributes (a constant compares its bytes).
  bool computes_same_as(const Operation& other) const override {
    return name() == other.name() && attributes() == other.attributes();
  }
};

// "full": every element `value`, converted to the result's dtype (as jnp.full).
class FullOp final : public CreationOperation {
 public:
  FullOp(double value, ValueType type) : value(value), type(std::move(type)) {}
  const double value;
  const ValueType type;

  std::string name() const override { return "full"; }
  std::string attributes() const override;  // "value=0.5", and "out_sharding=…" when given
  ValueType result_type(std::span<const ValueType> operands) const override;
  PartitionSpec type_spec(std::span<const ValueType> operands, const ValueType& result,
                          const Mesh& mesh) const override;
  Block run(const KernelContext& device, const Step& step,
            std::span<const Block> in) const override;
};

// "iota": 0, 1, 2, … along the one dimension of a rank-1 result.
class IotaOp final : public CreationOperation {
 public:
  explicit IotaOp(ValueType type) : type(std::move(type)) {}
  const ValueType type;

  std::string name() const override { return "iota"; }
  std::string attributes() const override;  // "out_sharding=…" when given
  ValueType result_type(std::span<const ValueType> operands) const override;
  PartitionSpec type_spec(std::span<const ValueType> operands, const ValueType& result,
                          const Mesh& mesh) const override;
  Block run(const KernelContext& device, const Step& step,
            std::span<const Block> in) const override;
};

// "constant": an array the traced function captured (jnp.asarray of host data). Its text is a
// hash of its bytes ("bytes=#…"), so a program's text cannot make one.
class ConstantOp final : public CreationOperation {
 public:
  explicit ConstantOp(std::shared_ptr<const HostArray> value) : value(std::move(value)) {}
  const std::shared_ptr<const HostArray> value;

  std::string name() const override { return "constant"; }
  std::string attributes() const override;
  // Another constant of equal type and bytes (the text's hash alone could collide).
  bool computes_same_as(const Operation& other) const override {
    const auto* c = dynamic_cast<const ConstantOp*>(&other);
    return c != nullptr && c->value->dtype() == value->dtype() &&
           c->value->shape() == value->shape() &&
           std::equal(value->bytes().begin(), value->bytes().end(), c->value->bytes().begin(),
                      c->value->bytes().end());
  }
  ValueType result_type(std::span<const ValueType> operands) const override;
  Block run(const KernelContext& device, const Step& step,
            std::span<const Block> in) const override;
};

void CreationOperation::partition(Partitioner& p, int value, const Op& op) const {
  p.compute(value, {}, Layout::replicated(op.shape.size()));
}

namespace {

std::string out_sharding_text(const PartitionSpec& spec) {
  return spec.entries().empty() ? "" : "out_sharding=" + spec.to_string();
}

// The declared type with the line's out_sharding, if any.
ValueType with_out_sharding(const AttributeReader& r) {
  ValueType t = r.result();
  if (r.has("out_sharding")) t.spec = r.spec("out_sharding");
  return t;
}

}  // namespace

std::string FullOp::attributes() const {
  const std::string out = out_sharding_text(type.spec);
  return fmt::format("value={}{}{}", value, out.empty() ? "" : " ", out);
}

PartitionSpec FullOp::type_spec(std::span<const ValueType> /*operands*/,
                                const ValueType& /*result*/, const Mesh& /*mesh*/) const {
  return type.spec;
}

std::string IotaOp::attributes() const { return out_sharding_text(type.spec); }

PartitionSpec IotaOp::type_spec(std::span<const ValueType> /*operands*/,
                                const ValueType& /*result*/, const Mesh& /*mesh*/) const {
  return type.spec;
}

ValueType FullOp::result_type(std::span<const ValueType> operands) const {
  check_operand_count("full", operands, 0);
  return type;
}

Block FullOp::run(const KernelContext& device, const Step& step,
                  std::span<const Block> /*in*/) const {
  Block out = device.allocate(step.dtype, step.shape);
  device.backend.fill(step.dtype, value, out.mutable_bytes().data(), out.size());
  return out;
}

ValueType IotaOp::result_type(std::span<const ValueType> operands) const {
  check_operand_count("iota", operands, 0);
  if (type.shape.size() != 1) throw InvalidArgument("iota: makes rank-1 values only");
  return type;
}

Block IotaOp::run(const KernelContext& device, const Step& step,
                  std::span<const Block> /*in*/) const {
  Block out = device.allocate(step.dtype, step.shape);
  device.backend.iota(step.dtype, out.mutable_bytes().data(), out.size());
  return out;
}

std::string ConstantOp::attributes() const {
  return fmt::format("bytes=#{:016x}", XXH3_64bits(value->bytes().data(), value->nbytes()));
}

ValueType ConstantOp::result_type(std::span<const ValueType> operands) const {
  check_operand_count("constant", operands, 0);
  return {value->dtype(), value->shape()};
}

Block ConstantOp::run(const KernelContext& device, const Step& step,
                      std::span<const Block> /*in*/) const {
  // A copy of the program's value in the device's memory. The executor keeps it for later calls
  // (same_at_every_call), so a step that writes to it copies it first (copy on write).
  const Block held = Block::view(step.dtype, step.shape, value->bytes().data());
  return device.memory == MemorySpace::host() ? held.copy() : held.to_memory(device.memory);
}

namespace {

const bool creation_registered = [] {
  register_operation("full", [](const AttributeReader& r) {
    return make_operation<FullOp>(r.number("value"), with_out_sharding(r));
  });
  register_operation("iota", [](const AttributeReader& r) {
    return make_operation<IotaOp>(with_out_sharding(r));
  });
  register_operation("constant", [](const AttributeReader& r) -> std::shared_ptr<const Operation> {
    throw InvalidArgument(r.op() +
                          ": a constant's bytes are not in a program's text; use full or iota");
  });
  return true;
}();

}  // namespace

// --- the family's builders (lax.h) ---

namespace lax {

Tensor full(const std::shared_ptr<Trace>& trace, ValueType type, double value) {
  return trace->apply(make_operation<FullOp>(value, std::move(type)), {});
}

Tensor full(const std::shared_ptr<Trace>& trace, const Shape& shape, DType dtype, double value) {
  return full(trace, ValueType{dtype, shape}, value);
}

Tensor full_like(const Tensor& x, double value) {
  const Op source = x.trace()->op(x.value());  // a copy: full() grows the program
  Tensor out = full(x.trace(), ValueType{x.dtype(), x.shape(), source.spec}, value);
  if (const auto* param = source.as<ParameterOp>()) {
    return constrained_auto(out, *param->sharding());
  }
  return out;
}

Tensor iota(const std::shared_ptr<Trace>& trace, ValueType type) {
  return trace->apply(make_operation<IotaOp>(std::move(type)), {});
}

Tensor constant(const std::shared_ptr<Trace>& trace, const HostArray& value) {
  return trace->apply(make_operation<ConstantOp>(std::make_shared<const HostArray>(value)), {});
}

}  // namespace lax
}  // namespace spmd::compiler
