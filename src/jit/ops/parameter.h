// The given-layout family: where a layout comes from outside the program's own rules, a jit
// parameter's sharding and lax::with_sharding_constraint.
#pragma once

#include <memory>

#include "jit/operation.h"
#include "spmd/sharding.h"

namespace spmd::compiler {

// "parameter": flat argument `index` of the jitted function, laid out as `sharding`. Defined
// from the inputs: no step computes it.
class ParameterOp final : public Operation {
 public:
  ParameterOp(int index, ValueType type, std::shared_ptr<const NamedSharding> sharding)
      : index(index), type(std::move(type)), sharding_(std::move(sharding)) {}
  const int index;
  const ValueType type;

  std::string name() const override { return "parameter"; }
  // "index=0 sharding=PartitionSpec('dp', None)"
  std::string attributes() const override;
  ValueType result_type(std::span<const ValueType> operands) const override;
  // The sharding's Explicit axes.
  PartitionSpec type_spec(std::span<const ValueType> operands, const ValueType& result,
                          const Mesh& mesh) const override;
  void partition(Partitioner& p, int value, const Op& op) const override;
  Block run(const KernelContext& device, const Step& step,
            std::span<const Block> in) const override;
  const NamedSharding* sharding() const override { return sharding_.get(); }
  // The same sharding, shared: the per-device program's parameter holds this very object.
  const std::shared_ptr<const NamedSharding>& shared_sharding() const { return sharding_; }

 private:
  const std::shared_ptr<const NamedSharding> sharding_;
};

// "sharding_constraint": the operand laid out as `sharding` here; later uses and earlier
// replicated values lean toward it (hints.cc). Its cotangent is constrained alike. It leaves the
// type as it is: on a mesh of Explicit axes only it must equal it (JAX: an assertion), on a
// mixed mesh it may name Auto axes only; ShardingTypeError otherwise, naming spmd::reshard.
//
// "reshard" (Kind::kReshard, spmd::reshard on a mesh with Explicit axes): the same move, but the
// result's type becomes `sharding` (which names no Auto axis: checked_type_spec), and the
// cotangent moves back to the operand's.
class ConstraintOp final : public Operation {
 public:
  enum class Kind : uint8_t { kConstraint, kReshard };
  explicit ConstraintOp(std::shared_ptr<const NamedSharding> sharding,
                        Kind kind = Kind::kConstraint)
      : kind(kind), sharding_(std::move(sharding)) {}
  const Kind kind;

  std::string name() const override {
    return kind == Kind::kReshard ? "reshard" : "sharding_constraint";
  }
  std::string attributes() const override;  // "sharding=PartitionSpec(…)"
  ValueType result_type(std::span<const ValueType> operands) const override;
  PartitionSpec type_spec(std::span<const ValueType> operands, const ValueType& result,
                          const Mesh& mesh) const override;
  void partition(Partitioner& p, int value, const Op& op) const override;
  // Asked of the operand whatever the result's hint, also when there is none.
  std::optional<Layout> operand_hint(const Op& op, const Shape& operand,
                                     const Layout* result) const override;
  // Shardy's pointwise rule; its result's layout is set before propagation (propagation.h).
  std::optional<FactorRule> factor_rule(std::span<const ValueType> operands,
                                        const ValueType& result) const override;
  Block run(const KernelContext& device, const Step& step,
            std::span<const Block> in) const override;
  const NamedSharding* sharding() const override { return sharding_.get(); }
  Cotangents vjp(const Op& op, const Tensor& result, std::span<const Tensor> operands,
                 const Tensor& g) const override;

 private:
  const std::shared_ptr<const NamedSharding> sharding_;
  // The slices' dimension is left unconstrained (None in the spec).
  Batched batch(const Op& op, std::span<const Batched> operands, int64_t size) const override;
};

}  // namespace spmd::compiler
