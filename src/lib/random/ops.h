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
// use asks, each device computing its own block. Under vmap (batching.h) the key is an array of
// keys, uint32[batch…, 2], and the result holds one sample per key, [batch…, shape…]: what JAX
// computes by mapping the sampler over the keys. `split`: in a device's step, the mesh axes
// splitting each dimension of the result; empty in the program.
class RandomOperation : public Operation {
 public:
  RandomOperation(Shape shape, std::vector<std::vector<std::string>> split, Shape batch_shape)
      : shape(std::move(shape)), split(std::move(split)), batch_shape(std::move(batch_shape)) {}
  const Shape shape;
  const std::vector<std::vector<std::string>> split;
  const Shape batch_shape;  // the keys' shape without their last dimension

  // Sharding in types: each batch dimension as the keys split it, the sample's dimensions whole
  // (JAX's random_bits on a replicated key: replicated).
  PartitionSpec type_spec(std::span<const ValueType> operands, const ValueType& result,
                          const Mesh& mesh) const override;
  // The keys are whole on every device; the result takes the split a later use asks for (none
  // otherwise), and each device's step knows the mesh axes of its block's position.
  void partition(Partitioner& p, int value, const Op& op) const override;
  // One sample per key: the slices' keys (and offsets) become a leading batch dimension.
  Batched batch(const Op& op, std::span<const Batched> operands, int64_t size) const override;
  // The step's block of the samples: for each key of the device's block of the batch, in order,
  // write() of that key's part of the block, from the device's mesh position.
  Block run(const KernelContext& device, const Step& step, std::span<const Block> in) const final;

 protected:
  // " blocks=[a,_]" in a device's step whose block is split; empty otherwise.
  std::string blocks_text() const;
  // Throws InvalidArgument, naming the kind, unless the operands are raw keys (uint32[batch…, 2])
  // and at most `offsets` uint32 offsets (one for all keys, or one per key), and the shape has no
  // negative dimension.
  void check_operands(std::span<const ValueType> operands, size_t offsets) const;
  // One key's part of a step's block: the kernel writing `block` at `out`.
  virtual void write(const kernels::Backend& backend, const kernels::RandomBlock& block,
                     std::byte* out) const = 0;
  // The same kind with another split (a device's step) or batch (vmap).
  virtual std::shared_ptr<const Operation> remade(std::vector<std::vector<std::string>> split,
                                                  Shape batch_shape) const = 0;
  // Whether the result's last dimension stays whole on every device (a key's two words).
  virtual bool whole_last_dimension() const { return false; }
};

// Bits, or new keys, from a raw key and, for fold_in, a uint32 scalar operand added to every
// index (a value, so a loop folding in its step number runs one program).
class RandomBitsOp final : public RandomOperation {
 public:
  // `shape`: the sample's shape (for kKeys without the trailing 2).
  RandomBitsOp(kernels::RandomBits kind, Shape shape,
               std::vector<std::vector<std::string>> split = {}, Shape batch = {})
      : RandomOperation(std::move(shape), std::move(split), std::move(batch)), kind(kind) {}
  const kernels::RandomBits kind;

  std::string name() const override { return "random_bits"; }
  // "bits=u32", "bits=keys"; a device's step adds the axes placing its block, "blocks=[a,_]".
  std::string attributes() const override;
  // key u32[batch…, 2] (and an offset u32[] or u32[batch…]) -> u8/u16/u32/u64[batch…, shape…],
  // or u32[batch…, shape…, 2] for keys.
  ValueType result_type(std::span<const ValueType> operands) const override;

 private:
  void write(const kernels::Backend& backend, const kernels::RandomBlock& block,
             std::byte* out) const override;
  std::shared_ptr<const Operation> remade(std::vector<std::vector<std::string>> split,
                                          Shape batch_shape) const override;
  bool whole_last_dimension() const override { return kind == kernels::RandomBits::kKeys; }
};

// Values of one of JAX's distributions (kernels/random_samplers.h), named "random_" and the
// distribution: random_uniform minval=0 maxval=1, random_normal, random_truncated_normal
// lower=-2 upper=2, random_gumbel, random_randint minval=0 maxval=10 (past_range=1 when JAX's
// maxval was above the dtype's range).
class RandomSampleOp final : public RandomOperation {
 public:
  RandomSampleOp(kernels::Sampler sampler, Shape shape,
                 std::vector<std::vector<std::string>> split = {}, Shape batch = {})
      : RandomOperation(std::move(shape), std::move(split), std::move(batch)), sampler(sampler) {}
  const kernels::Sampler sampler;

  std::string name() const override;
  std::string attributes() const override;
  // key u32[batch…, 2] -> dtype[batch…, shape…]
  ValueType result_type(std::span<const ValueType> operands) const override;

 private:
  void write(const kernels::Backend& backend, const kernels::RandomBlock& block,
             std::byte* out) const override;
  std::shared_ptr<const Operation> remade(std::vector<std::vector<std::string>> split,
                                          Shape batch_shape) const override;
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
  // A batched operand moves `axis` up by one. Batched keys permute each slice by its own key, one
  // operation per slice: the kernel permutes by one key.
  Batched batch(const Op& op, std::span<const Batched> operands, int64_t size) const override;
};

// JAX's gamma (random_gamma_p): for each element of the shape parameters `a` (operand 1, float32),
// a Gamma(a, 1) sample, or its logarithm (kernels::random_gamma's `form`), element i from key i
// of split(key, a.size). Whole on every device: each element's rejection loop takes its own
// number of draws.
class RandomGammaOp final : public Operation {
 public:
  explicit RandomGammaOp(kernels::GammaForm form) : form(form) {}
  const kernels::GammaForm form;

  std::string name() const override { return "random_gamma"; }
  // "log_space=0", "log_space=1", or "log_space=1, ynn_log=1"
  std::string attributes() const override;
  // key u32[2], a f32[shape] -> f32[shape]
  ValueType result_type(std::span<const ValueType> operands) const override;
  void partition(Partitioner& p, int value, const Op& op) const override;
  Block run(const KernelContext& device, const Step& step,
            std::span<const Block> in) const override;
  // One operation per slice: the kernel samples from one key.
  Batched batch(const Op& op, std::span<const Batched> operands, int64_t size) const override;
};

// jax.random.dirichlet's normalisation along the last axis of float32 log-space samples as JAX's
// CPU program computes it from 4,096 values, through YNNPACK (kernels::ynn_softmax_rows). Whole
// on every device.
class YnnSoftmaxOp final : public Operation {
 public:
  std::string name() const override { return "random_ynn_softmax"; }
  // x f32[..., k] -> f32[..., k]
  ValueType result_type(std::span<const ValueType> operands) const override;
  void partition(Partitioner& p, int value, const Op& op) const override;
  Block run(const KernelContext& device, const Step& step,
            std::span<const Block> in) const override;
  // Rows are rows: the batch axis leads and joins them.
  Batched batch(const Op& op, std::span<const Batched> operands, int64_t size) const override;
};

// jax.random.ball's sum of |g|^p along the last axis as JAX's CPU program computes it from 4,096
// values, through YNNPACK (kernels::ynn_power_sum_rows). Whole on every device.
class YnnPowerSumOp final : public Operation {
 public:
  std::string name() const override { return "random_ynn_power_sum"; }
  // g f32[..., k], p f32[] -> f32[...]
  ValueType result_type(std::span<const ValueType> operands) const override;
  void partition(Partitioner& p, int value, const Op& op) const override;
  Block run(const KernelContext& device, const Step& step,
            std::span<const Block> in) const override;
  // A batched g leads with its batch axis; a batched p takes one operation per slice.
  Batched batch(const Op& op, std::span<const Batched> operands, int64_t size) const override;
};

// JAX's poisson: for each rate of operand 1 (float32), an int32 Poisson sample
// (kernels::random_poisson, over the whole array: its rejection rounds are shared). Whole on every
// device.
class RandomPoissonOp final : public Operation {
 public:
  std::string name() const override { return "random_poisson"; }
  // key u32[2], lam f32[shape] -> i32[shape]
  ValueType result_type(std::span<const ValueType> operands) const override;
  void partition(Partitioner& p, int value, const Op& op) const override;
  Block run(const KernelContext& device, const Step& step,
            std::span<const Block> in) const override;
  Batched batch(const Op& op, std::span<const Batched> operands, int64_t size) const override;
};

// The kind that makes `dtype` (u8, u16, u32 or u64); throws InvalidArgument naming `what` for
// any other dtype, as jax.random.bits refuses it.
kernels::RandomBits random_bits_kind(std::string_view what, DType dtype);

}  // namespace spmd::compiler
