// The manual family: the operations of lax::shard_map inside a trace (traced_shard_map.h). Values
// between shard_map_in and shard_map_out are one device's blocks, with local shapes; the
// partitioner treats them as replicated and inserts nothing there but psum's collective.
#pragma once

#include <memory>
#include <vector>

#include "jit/operation.h"
#include "spmd/sharding.h"

namespace spmd::compiler {

// Shared by the boundaries: the shard_map's mesh and the boundary's spec ("spec=…"), and whether
// the body's values are typed by the mesh axes they vary over (JAX's check_vma; " check_vma=false"
// printed when not).
class ManualBoundary : public Operation {
 public:
  explicit ManualBoundary(std::shared_ptr<const NamedSharding> sharding, bool check_vma = true)
      : sharding_(std::move(sharding)), check_vma_(check_vma) {}

  std::string attributes() const override;
  const NamedSharding* sharding() const override { return sharding_.get(); }
  bool check_vma() const { return check_vma_; }
  // A relabelling of the same slot: no kernel runs.
  Block run(const KernelContext& device, const Step& step,
            std::span<const Block> in) const override;
  // Refused: vmap of a shard_map (vmap inside its body works).
  Batched batch(const Op& op, std::span<const Batched> operands, int64_t size) const override;

 protected:
  const std::shared_ptr<const NamedSharding> sharding_;
  const bool check_vma_;
};

// "shard_map_in": each device's block of the operand laid out as `sharding` (after resharding the
// operand to it).
class ManualInOp final : public ManualBoundary {
 public:
  using ManualBoundary::ManualBoundary;
  std::string name() const override { return "shard_map_in"; }
  ValueType result_type(std::span<const ValueType> operands) const override;
  // A device's block: its axes are Manual inside the body, so its type names none.
  PartitionSpec type_spec(std::span<const ValueType> operands, const ValueType& result,
                          const Mesh& mesh) const override;
  void partition(Partitioner& p, int value, const Op& op) const override;
  Cotangents vjp(const Op& op, const Tensor& result, std::span<const Tensor> operands,
                 const Tensor& g) const override;
};

// "shard_map_out": the global value whose blocks, laid out as `sharding`, the operand holds.
class ManualOutOp final : public ManualBoundary {
 public:
  using ManualBoundary::ManualBoundary;
  std::string name() const override { return "shard_map_out"; }
  ValueType result_type(std::span<const ValueType> operands) const override;
  // The out_spec's Explicit axes.
  PartitionSpec type_spec(std::span<const ValueType> operands, const ValueType& result,
                          const Mesh& mesh) const override;
  void partition(Partitioner& p, int value, const Op& op) const override;
  Cotangents vjp(const Op& op, const Tensor& result, std::span<const Tensor> operands,
                 const Tensor& g) const override;
};

// "psum", "pmax", "pmin": a block reduced over the devices along the mesh axes at positions
// `axes` (of `mesh`), as lax.psum, lax.pmax and lax.pmin.
class AxisReduceOp final : public Operation {
 public:
  enum class Kind : uint8_t { kSum, kMax, kMin };
  AxisReduceOp(Kind kind, std::shared_ptr<const Mesh> mesh, std::vector<int> axes)
      : kind(kind), mesh(std::move(mesh)), axes(std::move(axes)) {}
  const Kind kind;
  const std::shared_ptr<const Mesh> mesh;
  const std::vector<int> axes;

  std::string name() const override;
  std::string attributes() const override;  // "axes={0,1}"
  ValueType result_type(std::span<const ValueType> operands) const override;
  void partition(Partitioner& p, int value, const Op& op) const override;
  Block run(const KernelContext& device, const Step& step,
            std::span<const Block> in) const override;
  // psum: JAX's transpose of psum_invariant, the identity (autodiff sums where the varying axes
  // demand it, autodiff.cc); pmax and pmin have none, as in JAX.
  Cotangents vjp(const Op& op, const Tensor& result, std::span<const Tensor> operands,
                 const Tensor& g) const override;
  // Each slice summed alike.
  Batched batch(const Op& op, std::span<const Batched> operands, int64_t size) const override;
};

}  // namespace spmd::compiler
