// The select/convert family: where(cond, a, b) and a change of dtype.
#include <fmt/format.h>

#include "jit/lax.h"
#include "jit/op_registry.h"
#include "jit/operation.h"
#include "jit/ops/elementwise.h"
#include "jit/program.h"
#include "jit/sharding_in_types.h"
#include "spmd/error.h"

namespace spmd::compiler {

// "select": out = cond ? a : b; cond bool, a and b of the result's dtype (each of the result's
// shape or rank 0).
class SelectOp final : public ElementwiseOperation {
 public:
  std::string name() const override { return "select"; }
  ValueType result_type(std::span<const ValueType> operands) const override;
  // JAX's: the condition (unless rank 0) and the operands split alike.
  PartitionSpec type_spec(std::span<const ValueType> operands, const ValueType& result,
                          const Mesh& mesh) const override;
  kernels::ChainStep chain_step(std::span<const DType> operands, DType result) const override;
  Cotangents vjp(const Op& op, const Tensor& result, std::span<const Tensor> operands,
                 const Tensor& g) const override;
};

// "convert": the operand as dtype `to` (the result's type says it; no attribute). Float to
// integer truncates toward zero, as NumPy's cast.
class ConvertOp final : public ElementwiseOperation {
 public:
  explicit ConvertOp(DType to) : to(to) {}
  const DType to;

  std::string name() const override { return "convert"; }
  ValueType result_type(std::span<const ValueType> operands) const override;
  kernels::ChainStep chain_step(std::span<const DType> operands, DType result) const override;
  // Differentiable from a floating dtype to a floating one.
  Cotangents vjp(const Op& op, const Tensor& result, std::span<const Tensor> operands,
                 const Tensor& g) const override;
};

ValueType SelectOp::result_type(std::span<const ValueType> operands) const {
  check_operand_count("select", operands, 3);  // cond, a, b
  if (operands[0].dtype != DType::kBool || operands[1].dtype != operands[2].dtype) {
    throw InvalidArgument(
        fmt::format("select: wants a bool condition and two operands of one "
                    "dtype, not {}, {} and {}",
                    dtype_name(operands[0].dtype), dtype_name(operands[1].dtype),
                    dtype_name(operands[2].dtype)));
  }
  return {operands[1].dtype, elementwise_shape("select", operands)};
}

PartitionSpec SelectOp::type_spec(std::span<const ValueType> operands, const ValueType& /*result*/,
                                  const Mesh& /*mesh*/) const {
  return same_type_spec("select", operands);
}

kernels::ChainStep SelectOp::chain_step(std::span<const DType> /*operands*/, DType result) const {
  return {.kind = kernels::ChainStep::Kind::kSelect, .dtype = result, .result = result};
}

Cotangents SelectOp::vjp(const Op& /*op*/, const Tensor& /*result*/,
                         std::span<const Tensor> operands, const Tensor& g) const {
  const Tensor& cond = operands[0];
  const Tensor zero = lax::full_like(g, 0);
  return {std::nullopt, lax::select(cond, g, zero), lax::select(cond, zero, g)};
}

ValueType ConvertOp::result_type(std::span<const ValueType> operands) const {
  check_operand_count("convert", operands, 1);
  return {to, operands[0].shape};
}

kernels::ChainStep ConvertOp::chain_step(std::span<const DType> operands, DType result) const {
  return {.kind = kernels::ChainStep::Kind::kConvert, .dtype = operands[0], .result = result};
}

Cotangents ConvertOp::vjp(const Op& /*op*/, const Tensor& /*result*/,
                          std::span<const Tensor> operands, const Tensor& g) const {
  const Tensor& x = operands[0];
  if (!is_floating(x.dtype())) {
    throw InvalidArgument(fmt::format(
        "grad: differentiating through convert from {} to {}: integer and bool values have no "
        "derivative",
        dtype_name(x.dtype()), dtype_name(to)));
  }
  return {lax::convert_element_type(g, x.dtype())};
}

namespace {

const OperationRegistration select_op("select", [](const AttributeReader&) {
  return make_operation<SelectOp>();
});
const OperationRegistration convert_op("convert", [](const AttributeReader& r) {
  return make_operation<ConvertOp>(r.result().dtype);
});

}  // namespace

// --- the family's builders (lax.h) ---

namespace lax {

Tensor convert_element_type(const Tensor& x, DType dtype) {
  if (x.dtype() == dtype) return x;
  return bind(make_operation<ConvertOp>(dtype), {x});
}

Tensor select(const Tensor& which, const Tensor& a, const Tensor& b) {
  return bind(make_operation<SelectOp>(), {which, a, b});
}

}  // namespace lax
}  // namespace spmd::compiler
