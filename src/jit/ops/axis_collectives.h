// The collectives of a lax::shard_map body beyond the reductions (manual.h's AxisReduceOp): gather,
// scatter, permute, the device's index along axes, and pcast's change of type. Each acts on one
// device's block over the mesh axes at positions `axes` of `mesh` (traced_shard_map.h says what
// each computes and how its result varies).
#pragma once

#include <memory>
#include <utility>
#include <vector>

#include "jit/operation.h"
#include "spmd/mesh.h"

namespace spmd::compiler {

// Shared by the kinds below: the mesh, the axes ("axes={0,1}"), and whether the shard_map types
// its values (check_vma; " check_vma=false" printed when not): a result of these is typed even
// when no operand is (axis_index, a pcast constant).
class AxisOperation : public Operation {
 public:
  AxisOperation(std::shared_ptr<const Mesh> mesh, std::vector<int> axes, bool check_vma = true)
      : mesh(std::move(mesh)), axes(std::move(axes)), check_vma(check_vma) {}
  const std::shared_ptr<const Mesh> mesh;
  const std::vector<int> axes;
  const bool check_vma;

  std::string attributes() const override;
  // The same operation on the slices' block as a whole (a gather refuses, below).
  Batched batch(const Op& op, std::span<const Batched> operands, int64_t size) const override;

 protected:
  // The product of the sizes of `axes`.
  int64_t group_size() const;
};

// "all_gather" and "psum_scatter" (tiled, along dimension `dim`): every device's block joined
// along dim in axis_index order, and the sum of the blocks, each device keeping its part of dim.
class AxisGatherOp final : public AxisOperation {
 public:
  AxisGatherOp(bool scatter, std::shared_ptr<const Mesh> mesh, std::vector<int> axes, int dim,
               bool check_vma = true)
      : AxisOperation(std::move(mesh), std::move(axes), check_vma), scatter(scatter), dim(dim) {}
  const bool scatter;
  const int dim;

  std::string name() const override { return scatter ? "psum_scatter" : "all_gather"; }
  std::string attributes() const override;  // "axes={0} dim=1"
  ValueType result_type(std::span<const ValueType> operands) const override;
  void partition(Partitioner& p, int value, const Op& op) const override;
  Block run(const KernelContext& device, const Step& step,
            std::span<const Block> in) const override;
  // Each one's transpose is the other (JAX's).
  Cotangents vjp(const Op& op, const Tensor& result, std::span<const Tensor> operands,
                 const Tensor& g) const override;
  // Refused: the slices' dimension would be gathered too (vmap inside the body works).
  Batched batch(const Op& op, std::span<const Batched> operands, int64_t size) const override;
};

// "ppermute": for each (source, target) pair of axis indices, target's block is source's; devices
// that are no target get zeros ("perm={0:1,1:0}").
class AxisPermuteOp final : public AxisOperation {
 public:
  AxisPermuteOp(std::shared_ptr<const Mesh> mesh, std::vector<int> axes,
                std::vector<std::pair<int, int>> perm, bool check_vma = true)
      : AxisOperation(std::move(mesh), std::move(axes), check_vma), perm(std::move(perm)) {}
  const std::vector<std::pair<int, int>> perm;

  std::string name() const override { return "ppermute"; }
  std::string attributes() const override;
  ValueType result_type(std::span<const ValueType> operands) const override;
  void partition(Partitioner& p, int value, const Op& op) const override;
  Block run(const KernelContext& device, const Step& step,
            std::span<const Block> in) const override;
  // The inverse permutation (JAX's).
  Cotangents vjp(const Op& op, const Tensor& result, std::span<const Tensor> operands,
                 const Tensor& g) const override;
};

// "axis_index": this device's position along the axes, an int32 scalar (the first axis major).
class AxisIndexOp final : public AxisOperation {
 public:
  using AxisOperation::AxisOperation;
  std::string name() const override { return "axis_index"; }
  ValueType result_type(std::span<const ValueType> operands) const override;
  void partition(Partitioner& p, int value, const Op& op) const override;
  Block run(const KernelContext& device, const Step& step,
            std::span<const Block> in) const override;
};

// "pvary": the operand unchanged, typed as varying over the axes too (pcast(x, axes,
// to="varying")). Its cotangent is summed over them (autodiff.cc, from the varying axes).
class AxisVaryOp final : public AxisOperation {
 public:
  using AxisOperation::AxisOperation;
  std::string name() const override { return "pvary"; }
  ValueType result_type(std::span<const ValueType> operands) const override;
  void partition(Partitioner& p, int value, const Op& op) const override;
  Block run(const KernelContext& device, const Step& step,
            std::span<const Block> in) const override;
  Cotangents vjp(const Op& op, const Tensor& result, std::span<const Tensor> operands,
                 const Tensor& g) const override;
};

}  // namespace spmd::compiler
