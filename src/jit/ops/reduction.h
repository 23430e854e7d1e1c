// The reduction family's sum, max, min and prod, declared for the fusion pass (jit/fuse.h), which
// hands a reduction of a chain's last axis to the backend with the chain.
#pragma once

#include <vector>

#include "jit/operation.h"
#include "kernels/reduce.h"

namespace spmd::compiler {

// `shape` with its last `merged` dimensions as one, of their product's length: the view in
// which a reduction sums them as one row (kernels/reduce.h: merged_trailing_axes).
Shape merged_view(const Shape& shape, int merged);

// "reduce_sum", "reduce_max", "reduce_min", "reduce_prod": over `axes` (ascending, distinct),
// which the result drops; the result keeps the operand's dtype (spmd::numpy converts first where
// jnp widens). A float32 sum reduces the trailing axes merged_trailing_axes names as one row.
class ReduceOp final : public Operation {
 public:
  ReduceOp(kernels::Reduce fn, std::vector<int64_t> axes) : fn(fn), axes(std::move(axes)) {}
  const kernels::Reduce fn;
  const std::vector<int64_t> axes;

  std::string name() const override;
  std::string attributes() const override;
  ValueType result_type(std::span<const ValueType> operands) const override;
  // JAX's: the operand's entries without the reduced dimensions'.
  PartitionSpec type_spec(std::span<const ValueType> operands, const ValueType& result,
                          const Mesh& mesh) const override;
  // A sum over a split dimension leaves a pending sum (settled where the value is used); max and
  // min over one reduce across the devices at once; a product gathers the dimension first.
  void partition(Partitioner& p, int value, const Op& op) const override;
  // Shardy's reduce rule (a reduced dimension is a reduction factor).
  std::optional<FactorRule> factor_rule(std::span<const ValueType> operands,
                                        const ValueType& result) const override;
  Block run(const KernelContext& device, const Step& step,
            std::span<const Block> in) const override;
  // sum: g spread; max/min: g shared among the elements equal to the result; prod: g times the
  // product of the other elements, in JAX's tree of halves (exact at zeros; differentiable again).
  Cotangents vjp(const Op& op, const Tensor& result, std::span<const Tensor> operands,
                 const Tensor& g) const override;
  // Over the same axes of each slice.
  Batched batch(const Op& op, std::span<const Batched> operands, int64_t size) const override;
};

}  // namespace spmd::compiler
