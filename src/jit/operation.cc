// The defaults of operation.h: no hint carried back, no factor rule, no derivative; blocks in
// the device's memory; and factor_rule.h's helpers.
#include "jit/operation.h"

#include <fmt/format.h>

#include "jit/program.h"
#include "jit/sharding_in_types.h"
#include "spmd/error.h"

namespace spmd::compiler {

Block KernelContext::allocate(DType dtype, const Shape& shape) const {
  return Block::allocate(dtype, shape, memory);
}

void check_operand_count(std::string_view what, std::span<const ValueType> operands, size_t count) {
  if (operands.size() != count) {
    throw InvalidArgument(fmt::format("{}: takes {} operand{}, not {}", what, count,
                                      count == 1 ? "" : "s", operands.size()));
  }
}

PartitionSpec Operation::type_spec(std::span<const ValueType> operands, const ValueType& /*result*/,
                                   const Mesh& /*mesh*/) const {
  for (const ValueType& t : operands) {
    if (t.spec.entries().empty()) continue;
    throw ShardingTypeError(fmt::format(
        "{}: has no sharding rule for operands split over Explicit mesh axes ({}); reshard them "
        "to P() first (reshard: jax.sharding.reshard), or make those axes Auto",
        name(), typed_list(operands)));
  }
  return {};
}

std::optional<FactorRule> Operation::factor_rule(std::span<const ValueType> /*operands*/,
                                                 const ValueType& /*result*/) const {
  return std::nullopt;
}

int FactorRule::add(int64_t size, Kind kind) {
  sizes.push_back(size);
  kinds.push_back(kind);
  return static_cast<int>(sizes.size()) - 1;
}

FactorRule FactorRule::pointwise(std::span<const ValueType> operands, const ValueType& result) {
  FactorRule rule;
  rule.family = Family::kElementwise;
  for (int64_t size : result.shape) rule.result.push_back(rule.add(size));
  for (const ValueType& t : operands)
    rule.operands.push_back(t.shape.empty() ? std::vector<int>{} : rule.result);
  return rule;
}

std::optional<Layout> Operation::operand_hint(const Op& /*op*/, const Shape& /*operand*/,
                                              const Layout* /*result*/) const {
  return std::nullopt;
}

Cotangents Operation::vjp(const Op& op, const Tensor& /*result*/,
                          std::span<const Tensor> /*operands*/, const Tensor& /*g*/) const {
  throw InvalidArgument(fmt::format("grad: {} has no derivative (its result is {})", name(),
                                    type_text(op.dtype, op.shape)));
}

Batched Operation::batch(const Op& op, std::span<const Batched> /*operands*/,
                         int64_t /*size*/) const {
  throw InvalidArgument(fmt::format("vmap: {} has no batching rule (its result is {})", name(),
                                    type_text(op.dtype, op.shape)));
}

}  // namespace spmd::compiler
