// The padding of an uneven split (layout.h, local_shape): a step the partitioner inserts before a
// rule reads along a padded dimension, never an operation of the traced program. A device whose
// block along `dim` holds fewer elements than the block's length (the last devices of 10 over 4:
// 3, 3, 3, then 1 and 2 of padding) overwrites the padding with a value that changes nothing
// the rule computes: zero for a sum or a contraction, the dtype's lowest value for a max, its
// highest for a min. Devices whose blocks are full copy nothing.
#pragma once

#include <string>
#include <vector>

#include "jit/operation.h"

namespace spmd::compiler {

// `x` cut to `shape`, its first elements along each dimension: a gathered dimension without the
// padding of its last blocks, or a block without its own. `x` itself when it has that shape.
Block trimmed(const KernelContext& device, Block x, const Shape& shape);
// `x` extended to `length` along `dim` with `fill`'s value: a dimension about to be scattered
// over the devices of an uneven split (zeros), or a block given its padding back.
Block padded(const KernelContext& device, Block x, int dim, int64_t length,
             PaddingFill fill = PaddingFill::kZero);

class FillPaddingOp final : public Operation {
 public:
  // `size`: the dimension's global size; `axes`: the mesh axes splitting it.
  FillPaddingOp(int dim, int64_t size, std::vector<std::string> axes, PaddingFill fill)
      : dim(dim), size(size), axes(std::move(axes)), fill(fill) {}
  const int dim;
  const int64_t size;
  const std::vector<std::string> axes;
  const PaddingFill fill;

  std::string name() const override { return "fill_padding"; }
  // "dim=0 size=10 axes=x value=lowest"
  std::string attributes() const override;
  // The operand's type.
  ValueType result_type(std::span<const ValueType> operands) const override;
  // Never called: the partitioner emits this step itself (Partitioner::fill_padding).
  void partition(Partitioner& p, int value, const Op& op) const override;
  Block run(const KernelContext& device, const Step& step,
            std::span<const Block> in) const override;
};

}  // namespace spmd::compiler
