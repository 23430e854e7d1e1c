// "custom_vjp": a value with a derivative of its own (lax::with_vjp). The value is computed by
// any composition of other operations; this operation passes it on unchanged (no kernel), and
// grad's walk asks its rule for the operands' cotangents instead of differentiating the
// composition, as JAX's primitives with a JVP rule of their own (sinh's g · cosh(x)) are.
#include <fmt/format.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "jit/batching.h"
#include "jit/lax.h"
#include "jit/operation.h"
#include "jit/partitioner.h"
#include "jit/program.h"
#include "spmd/error.h"
#include "spmd/vmap.h"

namespace spmd::compiler {
namespace {

// `rule` over inputs and a cotangent that all carry a leading batch dimension: traced on one
// slice of each, then batched (spmd/vmap.h). A cotangent the rule gives as none stays none.
lax::VjpRule vmapped(lax::VjpRule rule) {
  return [rule = std::move(rule)](const std::vector<Tensor>& inputs, const Tensor& g) {
    std::vector<Tensor> leaves = inputs;
    leaves.push_back(g);
    std::vector<std::string> labels;
    for (size_t i = 0; i < inputs.size(); ++i) labels.push_back(fmt::format("input {}", i));
    labels.emplace_back("cotangent");
    spmd::detail::VmapCall call(leaves, VmapAxes(leaves.size(), 0), labels);
    const std::vector<Tensor>& slices = call.slices();
    Cotangents c = rule({slices.begin(), slices.end() - 1}, slices.back());
    std::vector<Tensor> present;
    for (const auto& t : c) {
      if (t) present.push_back(*t);
    }
    const std::vector<Tensor> batched = call.results(present, VmapAxes{0});
    size_t at = 0;
    for (auto& t : c) {
      if (t) t = batched[at++];
    }
    return c;
  };
}

// Operands: the function's inputs, then the value. The result is the value.
class CustomVjpOp final : public Operation {
 public:
  CustomVjpOp(std::string function, lax::VjpRule rule, bool batchable)
      : function_(std::move(function)), rule_(std::move(rule)), batchable_(batchable) {}

  std::string name() const override { return "custom_vjp"; }
  // The function's name: two functions with rules of their own never print alike.
  std::string attributes() const override { return "fn=" + function_; }
  ValueType result_type(std::span<const ValueType> operands) const override {
    if (operands.size() < 2) {
      throw InvalidArgument(
          fmt::format("custom_vjp of {}: takes the inputs and the value, not {} operands",
                      function_, operands.size()));
    }
    return {operands.back().dtype, operands.back().shape};
  }
  PartitionSpec type_spec(std::span<const ValueType> operands, const ValueType& /*result*/,
                          const Mesh& /*mesh*/) const override {
    return operands.back().spec;
  }
  // The value's own layout: nothing moves.
  void partition(Partitioner& p, int value, const Op& op) const override {
    const int of = op.inputs.back();
    const Layout layout = p.layout(of);
    p.compute(value, {p.slot_with(of, layout)}, layout);
  }
  Block run(const KernelContext& /*device*/, const Step& /*step*/,
            std::span<const Block> in) const override {
    return in[0];
  }
  bool passes_operand_on() const override { return true; }
  Cotangents vjp(const Op& /*op*/, const Tensor& /*result*/, std::span<const Tensor> operands,
                 const Tensor& g) const override {
    check_held();
    const std::vector<Tensor> inputs(operands.begin(), operands.end() - 1);
    Cotangents c = rule_(inputs, g);
    if (c.size() != inputs.size()) {
      throw InvalidArgument(
          fmt::format("custom_vjp of {}: the rule gave {} cotangents for {} inputs", function_,
                      c.size(), inputs.size()));
    }
    c.emplace_back(std::nullopt);  // none through the composition that computed the value
    return c;
  }
  // Every operand's slices first. A batchable rule (written for any leading dimensions:
  // element-wise functions) takes them as they are; any other is itself vmapped, as JAX batches
  // a custom rule: traced once on one slice of the inputs and cotangent, then replayed over all.
  Batched batch(const Op& /*op*/, std::span<const Batched> operands, int64_t size) const override {
    check_held();
    std::vector<Tensor> moved;
    for (const Batched& b : operands) moved.push_back(batched_first(b, size));
    lax::VjpRule rule = batchable_ ? rule_ : vmapped(rule_);
    return {lax::bind(make_operation<CustomVjpOp>(function_, std::move(rule), batchable_), moved),
            0};
  }

  void release_tracing_state() const override { rule_ = nullptr; }

 private:
  void check_held() const {
    if (!rule_) {
      throw InvalidArgument(fmt::format(
          "custom_vjp of {}: its rule was let go when its program was compiled; differentiate "
          "or vmap the function itself, not a compiled program",
          function_));
    }
  }

  std::string function_;
  mutable lax::VjpRule rule_;  // released after compilation (release_tracing_state)
  bool batchable_;
};

}  // namespace

namespace lax {

Tensor with_vjp(const std::string& function, const std::vector<Tensor>& inputs, const Tensor& value,
                VjpRule rule, bool batchable) {
  std::vector<Tensor> operands = inputs;
  operands.push_back(value);
  return lax::bind(make_operation<CustomVjpOp>(function, std::move(rule), batchable), operands);
}

}  // namespace lax
}  // namespace spmd::compiler
