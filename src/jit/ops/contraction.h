// The contraction family: one kind, "dot", described by einsum letters ("bmk,bkn->bmn"), as
// PyTorch DTensor describes every matmul-like operation. jnp.dot, batched jnp.matmul, jnp.einsum
// and the derivatives of all three are this one operation with other letters, and its sharding
// rule is derived from the letters alone:
//   batch letters (both operands and the result): split as either operand splits them;
//   contracting letters (both operands, not the result): split alike on both sides, the result
//     then a pending sum over their axes (settled where it is used: psum or psum_scatter);
//   free letters (one operand and the result): split as that operand splits them.
// Each operand's letters are distinct and each is in the other operand or the result (spmd::numpy
// sums a letter found in one operand only before it contracts).
#pragma once

#include <optional>
#include <string>

#include "jit/operation.h"

namespace spmd::compiler {

// The roles of a contraction's letters: batch in the result's order, the others in their
// operand's.
struct ContractionLetters {
  std::string batch, contracting, lhs_free, rhs_free;
};

//
// Sharding in types (JAX's dot_general rule, by letters): batch letters split alike on both sides
// (the result takes the lhs's), contracting letters split on one side at most, free letters as
// their operand; ShardingTypeError otherwise, naming `out_sharding` as the remedy where the
// result's split is ambiguous. With `out_sharding` (Explicit axes only, canonical) the result's
// type is that spec, whatever the operands'.
class DotOp final : public Operation {
 public:
  DotOp(std::string lhs, std::string rhs, std::string out,
        std::optional<PartitionSpec> out_sharding = std::nullopt);
  const std::string lhs, rhs, out;  // one letter per dimension
  const ContractionLetters letters;
  const std::optional<PartitionSpec> out_sharding;

  std::string name() const override { return "dot"; }
  // "einsum=bmk,bkn->bmn", and "out_sharding=PartitionSpec(…)" when given.
  std::string attributes() const override;
  ValueType result_type(std::span<const ValueType> operands) const override;
  PartitionSpec type_spec(std::span<const ValueType> operands, const ValueType& result,
                          const Mesh& mesh) const override;
  void partition(Partitioner& p, int value, const Op& op) const override;
  // Shardy's dot_general rule: factors for the batch letters, the lhs's free ones, the rhs's,
  // then the contracting ones (reduction factors).
  std::optional<FactorRule> factor_rule(std::span<const ValueType> operands,
                                        const ValueType& result) const override;
  // One batched matrix product through the backend; operands whose letters are not in matrix
  // order are transposed first (or read transposed where BLAS can), the result after.
  Block run(const KernelContext& device, const Step& step,
            std::span<const Block> in) const override;
  // Each operand's cotangent is a contraction of g with the other operand, typed as the operand
  // (out_sharding) on a mesh with Explicit axes, as JAX's transpose rule does.
  Cotangents vjp(const Op& op, const Tensor& result, std::span<const Tensor> operands,
                 const Tensor& g) const override;
  // A new letter for the slices: a batch letter when both operands are batched, a free one
  // otherwise.
  Batched batch(const Op& op, std::span<const Batched> operands, int64_t size) const override;
};

// jnp.matmul's letters for `batch` leading dimensions: "…mk,…kn->…mn".
std::shared_ptr<const Operation> matmul_operation(
    size_t batch, std::optional<PartitionSpec> out_sharding = std::nullopt);

}  // namespace spmd::compiler
