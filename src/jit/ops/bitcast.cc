// "bitcast_convert_type": the operand's bits read as another dtype (jax.lax.bitcast_convert_type,
// StableHLO's bitcast_convert). No arithmetic: the result's elements are the operand's bytes.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "jit/batching.h"
#include "jit/factor_rule.h"
#include "jit/lax.h"
#include "jit/op_registry.h"
#include "jit/operation.h"
#include "jit/partitioner.h"
#include "jit/program.h"
#include "jit/sharding_in_types.h"
#include "spmd/error.h"

namespace spmd::compiler {
namespace {

// JAX's shape rule: a dtype of the same width keeps the shape; a narrower one adds a last
// dimension of width ratio (each element's bytes, little-endian, in order); a wider one drops
// the last dimension, which must hold exactly one element's bytes. Bool is refused unless it
// stays bool (XLA's bitcast has no bool bits to read).
class BitcastOp final : public Operation {
 public:
  explicit BitcastOp(DType to) : to(to) {}
  const DType to;

  std::string name() const override { return "bitcast_convert_type"; }
  ValueType result_type(std::span<const ValueType> operands) const override;
  // JAX's: the operand's spec, with an unsplit last dimension added (narrower) or dropped
  // (wider; ShardingTypeError if it was split).
  PartitionSpec type_spec(std::span<const ValueType> operands, const ValueType& result,
                          const Mesh& mesh) const override;
  // The operand's layout, its last dimension gathered first when a wider dtype merges it.
  void partition(Partitioner& p, int value, const Op& op) const override;
  std::optional<FactorRule> factor_rule(std::span<const ValueType> operands,
                                        const ValueType& result) const override;
  // The operand's block itself, read as `to` (a copy first where its start is not aligned to
  // `to`'s size, as a device's loads need).
  Block run(const KernelContext& device, const Step& step,
            std::span<const Block> in) const override;
  // JAX's defjvp_zero: nothing flows back through the bits.
  Cotangents vjp(const Op& op, const Tensor& result, std::span<const Tensor> operands,
                 const Tensor& g) const override;
  // Vectorized: the same bitcast of every slice, the batch dimension first.
  Batched batch(const Op& op, std::span<const Batched> operands, int64_t size) const override;
};

ValueType BitcastOp::result_type(std::span<const ValueType> operands) const {
  check_operand_count("bitcast_convert_type", operands, 1);
  const DType from = operands[0].dtype;
  const Shape& shape = operands[0].shape;
  if ((from == DType::kBool || to == DType::kBool) && from != to) {
    throw InvalidArgument(fmt::format(
        "bitcast_convert_type: bool values have no bits to read as another dtype ({} to {}); "
        "convert with astype instead",
        dtype_name(from), dtype_name(to)));
  }
  const size_t old_size = dtype_size(from), new_size = dtype_size(to);
  if (old_size == new_size) return {to, shape};
  if (old_size > new_size) {
    Shape out = shape;
    out.push_back(static_cast<int64_t>(old_size / new_size));
    return {to, out};
  }
  const int64_t last = shape.empty() ? 1 : shape.back();
  if (last * static_cast<int64_t>(old_size) != static_cast<int64_t>(new_size)) {
    throw InvalidArgument(fmt::format(
        "bitcast_convert_type: ({}) from {} ({} bytes) to {} ({} bytes) needs a last dimension "
        "of {}, not {}",
        fmt::join(shape, ", "), dtype_name(from), old_size, dtype_name(to), new_size,
        new_size / old_size, last));
  }
  return {to, Shape(shape.begin(), shape.end() - (shape.empty() ? 0 : 1))};
}

PartitionSpec BitcastOp::type_spec(std::span<const ValueType> operands, const ValueType& result,
                                   const Mesh& /*mesh*/) const {
  std::vector<AxisEntry> entries = type_entries(operands[0]);
  if (result.shape.size() > operands[0].shape.size()) {
    entries.emplace_back();
  } else if (result.shape.size() < operands[0].shape.size()) {
    if (!entries.back().is_none()) {
      throw ShardingTypeError(
          "bitcast_convert_type: the last dimension, which a wider dtype merges into each "
          "element, is split; reshard it whole first");
    }
    entries.pop_back();
  }
  return canonical_spec(std::move(entries));
}

void BitcastOp::partition(Partitioner& p, int value, const Op& op) const {
  const size_t rank = p.op(op.inputs[0]).shape.size();
  Layout in = p.layout(op.inputs[0]).settled();
  Layout out = in;
  if (op.shape.size() > rank) {
    out.dims.emplace_back();
  } else if (op.shape.size() < rank) {
    in.dims.back().clear();  // gathered: each element's bytes on one device
    out.dims = in.dims;
    out.dims.pop_back();
  }
  p.compute(value, {p.slot_with(op.inputs[0], in)}, out);
}

std::optional<FactorRule> BitcastOp::factor_rule(std::span<const ValueType> operands,
                                                 const ValueType& result) const {
  const Shape& shape = operands[0].shape;
  FactorRule rule;
  rule.family = FactorRule::Family::kMovesElements;
  rule.operands = {std::vector<int>(shape.size(), -1)};
  rule.result.assign(result.shape.size(), -1);
  const size_t common = std::min(shape.size(), result.shape.size());
  const bool wider = result.shape.size() < shape.size();
  for (size_t d = 0; d < common; ++d) {
    rule.operands[0][d] = rule.result[d] = rule.add(shape[d]);
  }
  // The dimension only one side has: its own factor, which the other side does not carry.
  if (result.shape.size() > shape.size()) rule.result.back() = rule.add(result.shape.back());
  if (wider) rule.operands[0].back() = rule.add(shape.back(), FactorRule::Kind::kReduction);
  return rule;
}

Block BitcastOp::run(const KernelContext& /*device*/, const Step& step,
                     std::span<const Block> in) const {
  const auto start = reinterpret_cast<std::uintptr_t>(in[0].bytes().data());
  const Block aligned = start % dtype_size(to) == 0 ? in[0] : in[0].copy();
  return aligned.bitcast(to, step.shape);
}

Cotangents BitcastOp::vjp(const Op& /*op*/, const Tensor& /*result*/,
                          std::span<const Tensor> /*operands*/, const Tensor& /*g*/) const {
  return {std::nullopt};
}

Batched BitcastOp::batch(const Op& /*op*/, std::span<const Batched> operands, int64_t size) const {
  return on_slices_first(make_operation<BitcastOp>(to), operands[0], size);
}

const OperationRegistration bitcast_op("bitcast_convert_type", [](const AttributeReader& r) {
  return make_operation<BitcastOp>(r.result().dtype);
});

}  // namespace

namespace lax {

Tensor bitcast_convert_type(const Tensor& x, DType dtype) {
  return bind(make_operation<BitcastOp>(dtype), {x});
}

}  // namespace lax
}  // namespace spmd::compiler
