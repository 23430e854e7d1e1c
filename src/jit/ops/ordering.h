// The ordering family: operations whose values depend on an order of additions or comparisons
// that JAX takes from XLA (kernels/ordering.h), and the gather that goes with them. What
// jax.random.choice with probabilities, or from an array, is made of (spmd::random), and
// spmd::numpy's cumsum, searchsorted and take. None has a derivative yet.
#pragma once

#include "jit/operation.h"

namespace spmd::compiler {

// "cumsum": the running sum along `axis` (jnp.cumsum), in XLA's order for floats. The axis is
// whole on every device; the other dimensions keep their split.
class CumsumOp final : public Operation {
 public:
  explicit CumsumOp(int axis) : axis(axis) {}
  const int axis;

  std::string name() const override { return "cumsum"; }
  std::string attributes() const override;  // "axis=0"
  ValueType result_type(std::span<const ValueType> operands) const override;
  // JAX's: the operand's, unless the axis is split over an Explicit axis (ShardingTypeError).
  PartitionSpec type_spec(std::span<const ValueType> operands, const ValueType& result,
                          const Mesh& mesh) const override;
  void partition(Partitioner& p, int value, const Op& op) const override;
  Block run(const KernelContext& device, const Step& step,
            std::span<const Block> in) const override;
  Batched batch(const Op& op, std::span<const Batched> operands, int64_t size) const override;
};

// "searchsorted": for each element of the queries (operand 1), its int32 insertion index into
// the sorted rank-1 operand 0 (jnp.searchsorted, side 'left'). Operand 0 is whole on every
// device; the result is split as the queries are, so each device searches its own.
class SearchSortedOp final : public Operation {
 public:
  std::string name() const override { return "searchsorted"; }
  ValueType result_type(std::span<const ValueType> operands) const override;
  // The queries', where the sorted operand is not split over an Explicit axis.
  PartitionSpec type_spec(std::span<const ValueType> operands, const ValueType& result,
                          const Mesh& mesh) const override;
  void partition(Partitioner& p, int value, const Op& op) const override;
  // The queries are asked for the layout asked of the result (the draws of a choice are then
  // made split).
  std::optional<Layout> operand_hint(const Op& op, const Shape& operand,
                                     const Layout* result) const override;
  Block run(const KernelContext& device, const Step& step,
            std::span<const Block> in) const override;
  // Batched queries against one sorted operand.
  Batched batch(const Op& op, std::span<const Batched> operands, int64_t size) const override;
};

// "top_k": the int32 indices of the `k` largest elements of a rank-1 operand, largest first
// (lax.top_k's second result). Whole on every device.
class TopKOp final : public Operation {
 public:
  explicit TopKOp(int64_t k) : k(k) {}
  const int64_t k;

  std::string name() const override { return "top_k"; }
  std::string attributes() const override;  // "k=3"
  ValueType result_type(std::span<const ValueType> operands) const override;
  void partition(Partitioner& p, int value, const Op& op) const override;
  Block run(const KernelContext& device, const Step& step,
            std::span<const Block> in) const override;
  // One operation per slice: the kernel takes one rank-1 operand.
  Batched batch(const Op& op, std::span<const Batched> operands, int64_t size) const override;
};

// "take": operand 0's slices along `axis` at the int32 indices of operand 1 (any shape; one out
// of range is clamped, as XLA's gather does), which replace that dimension (jnp.take). Whole on
// every device.
class TakeOp final : public Operation {
 public:
  explicit TakeOp(int axis) : axis(axis) {}
  const int axis;

  std::string name() const override { return "take"; }
  std::string attributes() const override;  // "axis=0"
  ValueType result_type(std::span<const ValueType> operands) const override;
  void partition(Partitioner& p, int value, const Op& op) const override;
  Block run(const KernelContext& device, const Step& step,
            std::span<const Block> in) const override;
  // Batched indices into one operand, or one set of indices into batched slices, as one take;
  // both batched, one take per slice.
  Batched batch(const Op& op, std::span<const Batched> operands, int64_t size) const override;
};

}  // namespace spmd::compiler
