// The creation family: values made from nothing but their attributes. They are replicated (every
// device makes the whole value) and have no derivative to pass on. Full and iota take an
// out_sharding (jnp.zeros(…, out_sharding=)): the spec in their `type`, Explicit axes only, which
// becomes the result's type on a mesh with Explicit axes (each device then keeps its block).
#pragma once

#include <memory>

#include "jit/operation.h"
#include "spmd/host_array.h"

namespace spmd::compiler {

// The family's shared sharding rule: every device makes the whole value.
class CreationOperation : public Operation {
 public:
  void partition(Partitioner& p, int value, const Op& op) const final;
};

// "full": every element `value`, converted to the result's dtype (as jnp.full).
class FullOp final : public CreationOperation {
 public:
  FullOp(double value, ValueType type) : value(value), type(std::move(type)) {}
  const double value;
  const ValueType type;

  std::string name() const override { return "full"; }
  std::string attributes() const override;  // "value=0.5", and "out_sharding=…" when given
  ValueType result_type(std::span<const ValueType> operands) const override;
  PartitionSpec type_spec(std::span<const ValueType> operands, const ValueType& result,
                          const Mesh& mesh) const override;
  Block run(const KernelContext& device, const Step& step,
            std::span<const Block> in) const override;
};

// "iota": 0, 1, 2, … along the one dimension of a rank-1 result.
class IotaOp final : public CreationOperation {
 public:
  explicit IotaOp(ValueType type) : type(std::move(type)) {}
  const ValueType type;

  std::string name() const override { return "iota"; }
  std::string attributes() const override;  // "out_sharding=…" when given
  ValueType result_type(std::span<const ValueType> operands) const override;
  PartitionSpec type_spec(std::span<const ValueType> operands, const ValueType& result,
                          const Mesh& mesh) const override;
  Block run(const KernelContext& device, const Step& step,
            std::span<const Block> in) const override;
};

// "constant": an array the traced function captured (jnp.asarray of host data). Its text is a
// hash of its bytes ("bytes=#…"), so a program's text cannot make one.
class ConstantOp final : public CreationOperation {
 public:
  explicit ConstantOp(std::shared_ptr<const HostArray> value) : value(std::move(value)) {}
  const std::shared_ptr<const HostArray> value;

  std::string name() const override { return "constant"; }
  std::string attributes() const override;
  ValueType result_type(std::span<const ValueType> operands) const override;
  Block run(const KernelContext& device, const Step& step,
            std::span<const Block> in) const override;
};

}  // namespace spmd::compiler
