// One kind of operation of the typed program, and everything the compiler knows about it in one
// place, as JAX keeps a primitive's rules beside the primitive: its typed attributes (the
// subclass's fields), its name and attributes as the program's text prints them, its shape and
// dtype rule, its sharding rule, its kernel call through the device's backend, and its
// derivative. Each family of operations defines its kinds in one file of src/jit/ops/ and
// registers their names (op_registry.h); the rest of the compiler calls these methods and never
// switches over kinds. DESIGN.md, "Adding an operation", walks through one family.
//
// Operations are immutable after construction and shared between a program, its per-device
// steps and every thread running them.
// Open to lib/: a library adds a family of operations as ops/ does (the random family).
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "jit/factor_rule.h"
#include "jit/layout.h"
#include "kernels/backend.h"
#include "spmd/block.h"
#include "spmd/dtype.h"
#include "spmd/shape.h"
#include "spmd/sharding.h"
#include "spmd/tensor.h"

namespace spmd::compiler {

class Partitioner;
struct Op;
struct Step;

// The type of a value: its dtype, its global shape ("f32[8,4]" in the text) and, on a mesh with
// Explicit axes, its sharding in types (sharding_in_types.h): per dimension the Explicit axes
// splitting it, JAX's `typeof(x).sharding.spec`. The spec is canonical: empty when no dimension
// is split over an Explicit axis, otherwise one entry per dimension.
struct ValueType {
  DType dtype = DType::kFloat32;
  Shape shape;
  PartitionSpec spec;
  bool operator==(const ValueType&) const = default;
};

// One cotangent per operand; nullopt for an operand that gets none.
using Cotangents = std::vector<std::optional<Tensor>>;

// A value under vmap (batching.h): the Tensor holding every slice, and the dimension of it that
// indexes the slices; no dimension for a value that is the same for every slice (unbatched, and
// then `value` is the slice itself).
struct Batched {
  Tensor value;
  std::optional<int> dim;
};

// Where a per-device step runs: the backend of its device and the memory its blocks live in.
struct KernelContext {
  const kernels::Backend& backend;
  MemorySpace memory;
  // A block of `dtype` and `shape` in `memory`, its elements unspecified (the kernel writes all).
  Block allocate(DType dtype, const Shape& shape) const;
};

class Operation {
 public:
  virtual ~Operation() = default;

  // The name the program's text prints: "add", "reduce_sum", "dot".
  virtual std::string name() const = 0;
  // The attributes the result's type does not already say, by name ("axes={0,1}"); empty when
  // there are none. With name() and the types, all that tells two operations apart: programs
  // that print alike are alike (the cross-process check hashes the text).
  virtual std::string attributes() const { return {}; }

  // Shape and dtype rule: the result's type for operands of `operands`' types. The numpy
  // functions check the user's arguments and name the user's call in their errors before they
  // make an operation; this rule states the result and refuses what cannot be typed
  // (InvalidArgument), e.g. a program text that declares another type.
  virtual ValueType result_type(std::span<const ValueType> operands) const = 0;

  // Sharding-in-types rule (JAX's sharding_rule), asked only on a mesh with an Explicit axis:
  // the spec of the result's type (`result`: the shape and dtype rule's answer) from the
  // operands' specs, canonical (sharding_in_types.h). Throws ShardingTypeError where JAX raises
  // one: operands split in conflict, or a result whose split is ambiguous. The default gives a
  // replicated result when no operand is split over an Explicit axis, and refuses otherwise.
  virtual PartitionSpec type_spec(std::span<const ValueType> operands, const ValueType& result,
                                  const Mesh& mesh) const;

  // Sharding rule: gives value `value` (this operation, `op` in the program) a layout from its
  // operands' and emits its per-device steps through the partitioner (partitioner.h).
  virtual void partition(Partitioner& p, int value, const Op& op) const = 0;
  // The layout a later use asks of the result (`result`, a hint: hints.cc), carried back to the
  // operand of shape `operand`; nullopt when this operation carries no hint back. With no
  // `result` (null), what the operation asks of the operand whatever its own layout (a sharding
  // constraint's); such asks win over what later uses carry back.
  virtual std::optional<Layout> operand_hint(const Op& op, const Shape& operand,
                                             const Layout* result) const;

  // Shardy's sharding rule (factor_rule.h) for operands of `operands`' types and a result of
  // `result`'s: what the propagation that chooses JAX's output shardings (propagation.h) reads.
  // nullopt (the default): none, and a program holding such an operation keeps the layouts
  // partition() gives.
  virtual std::optional<FactorRule> factor_rule(std::span<const ValueType> operands,
                                                const ValueType& result) const;

  // Kernel call: the step's result on one device, from its operand blocks (local shapes; the
  // step holds the local result type). Calls kernels only through `device.backend`.
  virtual Block run(const KernelContext& device, const Step& step,
                    std::span<const Block> in) const = 0;
  // True when run() takes no operands and gives the same block at every call (full, iota,
  // constant): the executor keeps a device's block after its first call (execute.h).
  virtual bool same_at_every_call() const { return false; }
  // True when a step of this operation and one of `other` on the same operands give equal blocks
  // at every call: both deterministic, of one kind and equal attributes (element-wise kinds,
  // broadcast, full, iota, equal constants). The compiler then computes one of them
  // (jit/common_steps.h), as XLA's common-subexpression pass does. False (the default) for the
  // rest: what communicates, has an effect, or has not been reviewed for it.
  virtual bool computes_same_as(const Operation& /*other*/) const { return false; }
  // True for an operation whose step gives its one operand's block unchanged (custom_vjp: its
  // value is computed by the steps before it): the compiler reads that block in its place, so
  // the element-wise chains on either side fuse into one (jit/common_steps.h).
  virtual bool passes_operand_on() const { return false; }
  // True for an operation the program keeps though no output depends on it (a debug callback):
  // the trace lists its value among the program's effects, and its result is a token nothing
  // reads.
  virtual bool has_effect() const { return false; }

  // The sharding this operation names (a parameter's, a constraint's, a shard_map boundary's),
  // whose mesh must be the jit's; null for most.
  virtual const NamedSharding* sharding() const { return nullptr; }

  // Derivative: the operands' cotangents given `g`, the result's, written with spmd::numpy so
  // that the backward program is traced and partitioned like user code. The default throws
  // InvalidArgument ("has no derivative"). Never asked of leaves (no operands): grad's walk
  // (autodiff.cc) gives them no cotangents.
  virtual Cotangents vjp(const Op& op, const Tensor& result, std::span<const Tensor> operands,
                         const Tensor& g) const;
  // vjp() when only the operands `wanted` marks need a cotangent (the others are constants to
  // the derivative, and their entries may be nullopt): for an operation whose derivative exists
  // for some operands only (scatter-mul's, for updates at repeated indices). The default is vjp().
  virtual Cotangents vjp_wanted(const Op& op, const Tensor& result,
                                std::span<const Tensor> operands, const Tensor& g,
                                const std::vector<bool>& /*wanted*/) const {
    return vjp(op, result, operands, g);
  }

  // Lets go of what only tracing uses (a custom rule's callable), called once the program is
  // compiled, when no derivative or batch will be asked of it again. A rule written in Python
  // holds the user's functions, which may hold the jitted function whose cache holds this
  // program: a cycle through C++ that Python's collector cannot see. The default holds nothing.
  virtual void release_tracing_state() const {}

  // Batching rule: this operation applied to each of `size` slices of `operands` (at least one
  // batched), as new operations appended to their trace, and the dimension of the result that
  // indexes the slices. Written like vjp, so that what it appends is traced, differentiated and
  // partitioned like user code. The default throws InvalidArgument ("vmap: … has no batching
  // rule"); leaves (no operands) are never asked.
  virtual Batched batch(const Op& op, std::span<const Batched> operands, int64_t size) const;
};

// Throws InvalidArgument ("reshape: takes 1 operand, not 2") unless there are `count` operands;
// every kind's shape rule starts with it.
void check_operand_count(std::string_view what, std::span<const ValueType> operands, size_t count);

// Element-wise kinds (ops/elementwise.cc, ops/select_convert.cc) share a sharding rule and run
// as steps of element-wise chains (kernels/chain.h): one step alone, or many fused (fuse.h).
class ElementwiseOperation : public Operation {
 public:
  // This operation as a step of a chain, given its operands' dtypes and its result's; the
  // step's `args` are left for the caller to fill in.
  virtual kernels::ChainStep chain_step(std::span<const DType> operands, DType result) const = 0;

  // JAX's broadcasting rule (sharding_in_types.h: broadcast_type_spec).
  PartitionSpec type_spec(std::span<const ValueType> operands, const ValueType& result,
                          const Mesh& mesh) const override;
  // Per dimension, the first operand of the result's rank that splits it (unless its axes are
  // taken by an earlier dimension); rank-0 operands stay whole.
  void partition(Partitioner& p, int value, const Op& op) const final;
  std::optional<Layout> operand_hint(const Op& op, const Shape& operand,
                                     const Layout* result) const final;
  // Shardy's pointwise rule.
  std::optional<FactorRule> factor_rule(std::span<const ValueType> operands,
                                        const ValueType& result) const final;
  Block run(const KernelContext& device, const Step& step, std::span<const Block> in) const final;
  // Another element-wise operation of the same name and attributes: the kernels are
  // deterministic.
  bool computes_same_as(const Operation& other) const override;
  // The same operation on every operand with the slices first: batched operands moved there,
  // unbatched ones of the result's rank broadcast, rank-0 ones left as they are.
  Batched batch(const Op& op, std::span<const Batched> operands, int64_t size) const final;
};

// An operation of kind T with these constructor arguments, shared.
template <class T, class... Args>
std::shared_ptr<const Operation> make_operation(Args&&... args) {
  return std::make_shared<const T>(std::forward<Args>(args)...);
}

}  // namespace spmd::compiler
