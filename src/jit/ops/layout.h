// The layout family: operations that move elements without arithmetic. Their result shapes are
// in the result's type, so broadcast and reshape print no attributes.
#pragma once

#include <vector>

#include "jit/operation.h"

namespace spmd::compiler {

// "broadcast": NumPy broadcasting of the operand to `shape` (aligned at the right). Made where
// it is used, at the size and split the use wants.
class BroadcastOp final : public Operation {
 public:
  explicit BroadcastOp(Shape shape) : shape(std::move(shape)) {}
  const Shape shape;

  std::string name() const override { return "broadcast"; }
  // Another broadcast (the step's shape says to what).
  bool computes_same_as(const Operation& other) const override {
    return dynamic_cast<const BroadcastOp*>(&other) != nullptr;
  }
  ValueType result_type(std::span<const ValueType> operands) const override;
  // Each operand dimension's entry where it lands; new dimensions None.
  PartitionSpec type_spec(std::span<const ValueType> operands, const ValueType& result,
                          const Mesh& mesh) const override;
  void partition(Partitioner& p, int value, const Op& op) const override;
  std::optional<Layout> operand_hint(const Op& op, const Shape& operand,
                                     const Layout* result) const override;
  // Shardy's broadcast_in_dim rule (a dimension expanded from 1 is two factors).
  std::optional<FactorRule> factor_rule(std::span<const ValueType> operands,
                                        const ValueType& result) const override;
  Block run(const KernelContext& device, const Step& step,
            std::span<const Block> in) const override;
  // Summed back by grad's unbroadcast.
  Cotangents vjp(const Op& op, const Tensor& result, std::span<const Tensor> operands,
                 const Tensor& g) const override;
  // Each slice broadcast alike.
  Batched batch(const Op& op, std::span<const Batched> operands, int64_t size) const override;
};

// "reshape": the same elements in `shape`. A split survives where its dimension does.
class ReshapeOp final : public Operation {
 public:
  explicit ReshapeOp(Shape shape) : shape(std::move(shape)) {}
  const Shape shape;

  std::string name() const override { return "reshape"; }
  ValueType result_type(std::span<const ValueType> operands) const override;
  // JAX's: entries carried through size-1 changes, one split or one merge (an entry splits
  // across the new dimensions major first, axis by axis, each dividing evenly); anything else
  // split is ambiguous (ShardingTypeError: reshard the operand first).
  PartitionSpec type_spec(std::span<const ValueType> operands, const ValueType& result,
                          const Mesh& mesh) const override;
  void partition(Partitioner& p, int value, const Op& op) const override;
  // Shardy's rule for a reshape that inserts or drops size-1 dimensions (one that inserts them
  // is JAX's expand_dims, a broadcast_in_dim); none for one that merges or splits dimensions.
  std::optional<FactorRule> factor_rule(std::span<const ValueType> operands,
                                        const ValueType& result) const override;
  Block run(const KernelContext& device, const Step& step,
            std::span<const Block> in) const override;
  Cotangents vjp(const Op& op, const Tensor& result, std::span<const Tensor> operands,
                 const Tensor& g) const override;
  // Each slice reshaped alike.
  Batched batch(const Op& op, std::span<const Batched> operands, int64_t size) const override;
};

// "transpose": result dimension i is operand dimension permutation[i].
class TransposeOp final : public Operation {
 public:
  explicit TransposeOp(std::vector<int64_t> permutation) : permutation(std::move(permutation)) {}
  const std::vector<int64_t> permutation;

  std::string name() const override { return "transpose"; }
  std::string attributes() const override;
  ValueType result_type(std::span<const ValueType> operands) const override;
  // The operand's entries permuted.
  PartitionSpec type_spec(std::span<const ValueType> operands, const ValueType& result,
                          const Mesh& mesh) const override;
  void partition(Partitioner& p, int value, const Op& op) const override;
  std::optional<Layout> operand_hint(const Op& op, const Shape& operand,
                                     const Layout* result) const override;
  // Shardy's transpose rule (factors in the result's order).
  std::optional<FactorRule> factor_rule(std::span<const ValueType> operands,
                                        const ValueType& result) const override;
  Block run(const KernelContext& device, const Step& step,
            std::span<const Block> in) const override;
  Cotangents vjp(const Op& op, const Tensor& result, std::span<const Tensor> operands,
                 const Tensor& g) const override;
  // The slices stay first.
  Batched batch(const Op& op, std::span<const Batched> operands, int64_t size) const override;
};

// "slice": the box starting at `start` with the result's shape as extents. A sliced dimension
// stays whole on every device; an unsliced one keeps its split (and its local start is 0).
class SliceOp final : public Operation {
 public:
  SliceOp(std::vector<int64_t> start, Shape extent)
      : start(std::move(start)), extent(std::move(extent)) {}
  const std::vector<int64_t> start;
  const Shape extent;

  std::string name() const override { return "slice"; }
  std::string attributes() const override;
  ValueType result_type(std::span<const ValueType> operands) const override;
  // The operand's, where each sliced split dimension still divides over its axes
  // (ShardingTypeError otherwise, as JAX's).
  PartitionSpec type_spec(std::span<const ValueType> operands, const ValueType& result,
                          const Mesh& mesh) const override;
  void partition(Partitioner& p, int value, const Op& op) const override;
  Block run(const KernelContext& device, const Step& step,
            std::span<const Block> in) const override;
  Cotangents vjp(const Op& op, const Tensor& result, std::span<const Tensor> operands,
                 const Tensor& g) const override;
  // The same box of each slice.
  Batched batch(const Op& op, std::span<const Batched> operands, int64_t size) const override;
};

// "strided_slice": result element (i_0, i_1, …) is the operand's (start[0] + i_0 * step[0], …),
// the result's shape the extents: every step nonzero, negative ones reading backwards (lax.rev,
// x[::-1]), larger ones every |step|-th element (x[::2]). One pass, no index array (jnp.take of a
// constant was that, and read the constant too). A dimension it changes (a step other than 1 or
// part of the extent) is whole on every device; another keeps its split.
class StridedSliceOp final : public Operation {
 public:
  StridedSliceOp(std::vector<int64_t> start, std::vector<int64_t> step, Shape extent)
      : start(std::move(start)), step(std::move(step)), extent(std::move(extent)) {}
  const std::vector<int64_t> start;
  const std::vector<int64_t> step;
  const Shape extent;

  std::string name() const override { return "strided_slice"; }
  std::string attributes() const override;
  ValueType result_type(std::span<const ValueType> operands) const override;
  // The operand's, where each dimension it changes that is split still divides over its axes
  // (as slice's).
  PartitionSpec type_spec(std::span<const ValueType> operands, const ValueType& result,
                          const Mesh& mesh) const override;
  void partition(Partitioner& p, int value, const Op& op) const override;
  Block run(const KernelContext& device, const Step& step,
            std::span<const Block> in) const override;
  // The cotangent placed back where its elements were read, zeros elsewhere.
  Cotangents vjp(const Op& op, const Tensor& result, std::span<const Tensor> operands,
                 const Tensor& g) const override;
  // The same steps of each slice.
  Batched batch(const Op& op, std::span<const Batched> operands, int64_t size) const override;

 private:
  // Whether dimension d of an operand of `shape` is read other than whole and in order.
  bool changes(const Shape& shape, size_t d) const { return step[d] != 1 || extent[d] != shape[d]; }
};

// "concatenate": the operands one after another along `axis`, which stays whole.
class ConcatenateOp final : public Operation {
 public:
  explicit ConcatenateOp(int axis) : axis(axis) {}
  const int axis;

  std::string name() const override { return "concatenate"; }
  std::string attributes() const override;
  ValueType result_type(std::span<const ValueType> operands) const override;
  // Every operand split alike (ShardingTypeError otherwise); their spec.
  PartitionSpec type_spec(std::span<const ValueType> operands, const ValueType& result,
                          const Mesh& mesh) const override;
  void partition(Partitioner& p, int value, const Op& op) const override;
  Block run(const KernelContext& device, const Step& step,
            std::span<const Block> in) const override;
  Cotangents vjp(const Op& op, const Tensor& result, std::span<const Tensor> operands,
                 const Tensor& g) const override;
  // Along the same axis of each slice (unbatched operands broadcast).
  Batched batch(const Op& op, std::span<const Batched> operands, int64_t size) const override;
};

}  // namespace spmd::compiler
