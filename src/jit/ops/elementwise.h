// The element-wise family: unary and binary operations on operands of the result's shape (or
// rank 0). spmd::numpy broadcasts and promotes before it makes one; comparisons give bool.
#pragma once

#include "jit/operation.h"
#include "kernels/elementwise.h"

namespace spmd::compiler {

// "exp", "neg", …: out = f(x), of x's type.
class UnaryOp final : public ElementwiseOperation {
 public:
  explicit UnaryOp(kernels::Unary fn) : fn(fn) {}
  const kernels::Unary fn;

  std::string name() const override;
  ValueType result_type(std::span<const ValueType> operands) const override;
  kernels::ChainStep chain_step(std::span<const DType> operands, DType result) const override;
  Cotangents vjp(const Op& op, const Tensor& result, std::span<const Tensor> operands,
                 const Tensor& g) const override;
};

// "add", "mul", "lt", …: out = a fn b, operands of one dtype; bool for a comparison.
class BinaryOp final : public ElementwiseOperation {
 public:
  explicit BinaryOp(kernels::Binary fn) : fn(fn) {}
  const kernels::Binary fn;

  std::string name() const override;
  ValueType result_type(std::span<const ValueType> operands) const override;
  kernels::ChainStep chain_step(std::span<const DType> operands, DType result) const override;
  Cotangents vjp(const Op& op, const Tensor& result, std::span<const Tensor> operands,
                 const Tensor& g) const override;
};

// The shape element-wise operands make: the operands' of highest rank, which every other
// operand of positive rank must equal. Throws InvalidArgument naming `what` otherwise.
Shape elementwise_shape(std::string_view what, std::span<const ValueType> operands);

}  // namespace spmd::compiler
