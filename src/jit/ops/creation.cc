// The creation family (creation.h).
#include "jit/ops/creation.h"

#include <fmt/format.h>
#include <xxhash.h>

#include <cstring>

#include "jit/op_registry.h"
#include "jit/partitioner.h"
#include "spmd/error.h"

namespace spmd::compiler {
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
  Block out = device.allocate(step.dtype, step.shape);
  if (value->nbytes() > 0) {
    std::memcpy(out.mutable_bytes().data(), value->bytes().data(), value->nbytes());
  }
  return out;
}

namespace {

const bool registered = [] {
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
}  // namespace spmd::compiler
