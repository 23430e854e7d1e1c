// The random family: JAX's threefry2x32 PRNG in its partitionable mode (kernels/random_bits.h).
// One kind, "random_bits", makes bits, or new keys, from a raw key (uint32[2]) and, for fold_in,
// a uint32 scalar operand added to every index (a value, so a loop folding in its step number
// runs one program). Its sharding rule
// splits the result as its use asks (out_shardings, a constraint) and each device computes only
// its own block from the global indices of its elements: no communication, and the same values
// whatever the sharding.
#pragma once

#include <string>
#include <vector>

#include "jit/operation.h"
#include "kernels/random_bits.h"

namespace spmd::compiler {

class RandomBitsOp final : public Operation {
 public:
  // `shape`: the sample's shape (for kKeys without the trailing 2). `split`: in a device's step,
  // the mesh axes splitting each dimension; empty in the program.
  RandomBitsOp(kernels::RandomBits kind, Shape shape,
               std::vector<std::vector<std::string>> split = {})
      : kind(kind), shape(std::move(shape)), split(std::move(split)) {}
  const kernels::RandomBits kind;
  const Shape shape;
  const std::vector<std::vector<std::string>> split;

  std::string name() const override { return "random_bits"; }
  // "bits=u32", "bits=keys"; a device's step adds the axes placing its block, "blocks=[a,_]".
  std::string attributes() const override;
  // key u32[2] (and an offset u32[]) -> u8/u16/u32/u64[shape], or u32[shape…, 2] for keys.
  ValueType result_type(std::span<const ValueType> operands) const override;
  void partition(Partitioner& p, int value, const Op& op) const override;
  Block run(const KernelContext& device, const Step& step,
            std::span<const Block> in) const override;
};

// The kind that makes `dtype` (u8, u16, u32 or u64); throws InvalidArgument naming `what` for
// any other dtype, as jax.random.bits refuses it.
kernels::RandomBits random_bits_kind(std::string_view what, DType dtype);

}  // namespace spmd::compiler
