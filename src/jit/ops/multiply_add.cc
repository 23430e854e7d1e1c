// "multiply_add": a × b + c rounded once, the fused multiply-add that jit's contraction
// (jit/contract.h) makes of a product and the sum or difference reading it. Never traced by a
// user; it appears in per-device programs only, after differentiation.
#include <fmt/format.h>

#include "jit/op_registry.h"
#include "jit/operation.h"
#include "jit/ops/elementwise.h"
#include "jit/program.h"
#include "kernels/chain.h"
#include "spmd/error.h"

namespace spmd::compiler {
namespace {

class MultiplyAddOp final : public ElementwiseOperation {
 public:
  explicit MultiplyAddOp(uint8_t form) : form(form) {}
  const uint8_t form;  // kernels::MultiplyAddSign bits

  std::string name() const override { return "multiply_add"; }
  std::string attributes() const override { return fmt::format("form={}", form); }
  ValueType result_type(std::span<const ValueType> operands) const override {
    check_operand_count("multiply_add", operands, 3);
    const DType t = operands[0].dtype;
    if (t != DType::kFloat32 && t != DType::kFloat64) {
      throw InvalidArgument(
          fmt::format("multiply_add: computes float32 or float64, not {}", dtype_name(t)));
    }
    for (const ValueType& o : operands) {
      if (o.dtype != t) {
        throw InvalidArgument(
            fmt::format("multiply_add: operands of {} and {}", dtype_name(t), dtype_name(o.dtype)));
      }
    }
    return {t, elementwise_shape("multiply_add", operands)};
  }
  kernels::ChainStep chain_step(std::span<const DType> /*operands*/, DType result) const override {
    return {.kind = kernels::ChainStep::Kind::kMultiplyAdd,
            .fn = form,
            .dtype = result,
            .result = result};
  }
  // ±g·b, ±g·a and ±g: the product's and the sum's derivatives.
  Cotangents vjp(const Op& /*op*/, const Tensor& /*result*/, std::span<const Tensor> operands,
                 const Tensor& g) const override {
    const Tensor product = (form & kernels::kNegateProduct) != 0 ? -g : g;
    return {product * operands[1], product * operands[0],
            (form & kernels::kNegateAddend) != 0 ? -g : g};
  }
};

const OperationRegistration multiply_add_op("multiply_add", [](const AttributeReader& r) {
  const int64_t form = r.has("form") ? r.integer("form") : 0;
  if (form < 0 || form > 3) {
    throw InvalidArgument(fmt::format("multiply_add: form {}, not 0 to 3", form));
  }
  return make_operation<MultiplyAddOp>(static_cast<uint8_t>(form));
});

}  // namespace

std::shared_ptr<const Operation> multiply_add_operation(uint8_t form) {
  return make_operation<MultiplyAddOp>(form);
}

}  // namespace spmd::compiler
