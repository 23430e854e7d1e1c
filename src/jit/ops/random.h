// The random family: JAX's threefry2x32 PRNG in its partitionable mode (kernels/random_bits.h)
// and the samplers over it (kernels/random_samplers.h). "random_bits" makes bits or new keys;
// "random_uniform", "random_normal", … make a distribution's values. Their sharding rule splits
// the result as its use asks (out_shardings, a constraint) and each device computes only its
// own block from the global indices of its elements: no communication, and the same values
// whatever the sharding.
#pragma once

#include <string>
#include <vector>

#include "jit/operation.h"
#include "kernels/random_bits.h"
#include "kernels/random_samplers.h"

namespace spmd::compiler {

// What every random kind shares: a sample of `shape` from a raw key (uint32[2]), split as its
// use asks, each device computing its own block. `split`: in a device's step, the mesh axes
// splitting each dimension; empty in the program.
class RandomOperation : public Operation {
 public:
  RandomOperation(Shape shape, std::vector<std::vector<std::string>> split)
      : shape(std::move(shape)), split(std::move(split)) {}
  const Shape shape;
  const std::vector<std::vector<std::string>> split;

  // The key is whole on every device; the result takes the split a later use asks for (none
  // otherwise), and each device's step knows the mesh axes of its block's position.
  void partition(Partitioner& p, int value, const Op& op) const override;

 protected:
  // " blocks=[a,_]" in a device's step whose block is split; empty otherwise.
  std::string blocks_text() const;
  // Throws InvalidArgument, naming the kind, unless the operands are a raw key and at most
  // `offsets` uint32 scalars, and the shape has no negative dimension.
  void check_operands(std::span<const ValueType> operands, size_t offsets) const;
  // The step's block of the sample: its place in the whole, from the device's mesh position.
  kernels::RandomBlock block(const Step& step, std::span<const Block> in) const;
  // The same kind with the split of a device's step.
  virtual std::shared_ptr<const Operation> with_split(
      std::vector<std::vector<std::string>> split) const = 0;
  // Whether the result's last dimension stays whole on every device (a key's two words).
  virtual bool whole_last_dimension() const { return false; }
};

// Bits, or new keys, from a raw key and, for fold_in, a uint32 scalar operand added to every
// index (a value, so a loop folding in its step number runs one program).
class RandomBitsOp final : public RandomOperation {
 public:
  // `shape`: the sample's shape (for kKeys without the trailing 2).
  RandomBitsOp(kernels::RandomBits kind, Shape shape,
               std::vector<std::vector<std::string>> split = {})
      : RandomOperation(std::move(shape), std::move(split)), kind(kind) {}
  const kernels::RandomBits kind;

  std::string name() const override { return "random_bits"; }
  // "bits=u32", "bits=keys"; a device's step adds the axes placing its block, "blocks=[a,_]".
  std::string attributes() const override;
  // key u32[2] (and an offset u32[]) -> u8/u16/u32/u64[shape], or u32[shape…, 2] for keys.
  ValueType result_type(std::span<const ValueType> operands) const override;
  Block run(const KernelContext& device, const Step& step,
            std::span<const Block> in) const override;

 private:
  std::shared_ptr<const Operation> with_split(
      std::vector<std::vector<std::string>> split) const override;
  bool whole_last_dimension() const override { return kind == kernels::RandomBits::kKeys; }
};

// Values of one of JAX's distributions (kernels/random_samplers.h), named "random_" and the
// distribution: random_uniform minval=0 maxval=1, random_normal, random_truncated_normal
// lower=-2 upper=2, random_gumbel, random_randint minval=0 maxval=10 (past_range=1 when JAX's
// maxval was above the dtype's range).
class RandomSampleOp final : public RandomOperation {
 public:
  RandomSampleOp(kernels::Sampler sampler, Shape shape,
                 std::vector<std::vector<std::string>> split = {})
      : RandomOperation(std::move(shape), std::move(split)), sampler(sampler) {}
  const kernels::Sampler sampler;

  std::string name() const override;
  std::string attributes() const override;
  // key u32[2] -> dtype[shape]
  ValueType result_type(std::span<const ValueType> operands) const override;
  Block run(const KernelContext& device, const Step& step,
            std::span<const Block> in) const override;

 private:
  std::shared_ptr<const Operation> with_split(
      std::vector<std::vector<std::string>> split) const override;
};

// JAX's permutation: `x` (operand 1) reordered along `axis` by a random permutation of that
// dimension (kernels::random_permutation), the same for every slice; permutation(key, n) is
// that of arange(n). The operand and the result are whole on every device: each computes the
// permutation itself, which is cheap beside moving the data.
class RandomPermutationOp final : public Operation {
 public:
  explicit RandomPermutationOp(int axis) : axis(axis) {}
  const int axis;

  std::string name() const override { return "random_permutation"; }
  std::string attributes() const override;
  // key u32[2], x T[shape] -> T[shape]
  ValueType result_type(std::span<const ValueType> operands) const override;
  void partition(Partitioner& p, int value, const Op& op) const override;
  Block run(const KernelContext& device, const Step& step,
            std::span<const Block> in) const override;
};

// The kind that makes `dtype` (u8, u16, u32 or u64); throws InvalidArgument naming `what` for
// any other dtype, as jax.random.bits refuses it.
kernels::RandomBits random_bits_kind(std::string_view what, DType dtype);

}  // namespace spmd::compiler
