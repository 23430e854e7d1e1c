// The select/convert family: where(cond, a, b) and a change of dtype.
#pragma once

#include "jit/operation.h"

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

}  // namespace spmd::compiler
