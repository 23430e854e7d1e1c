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

namespace spmd::compiler {
namespace {

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
  Cotangents vjp(const Op& /*op*/, const Tensor& /*result*/, std::span<const Tensor> operands,
                 const Tensor& g) const override {
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
  // Every operand's slices first, and the same rule (which with_vjp's callers write for any
  // leading dimensions: element-wise functions); a rule that is not batchable is replaced by one
  // that refuses, so that no derivative comes from the composition without a word.
  Batched batch(const Op& /*op*/, std::span<const Batched> operands, int64_t size) const override {
    std::vector<Tensor> moved;
    for (const Batched& b : operands) moved.push_back(batched_first(b, size));
    lax::VjpRule rule = rule_;
    if (!batchable_) {
      rule = [function = function_](const std::vector<Tensor>& /*inputs*/,
                                    const Tensor& /*g*/) -> std::vector<std::optional<Tensor>> {
        throw InvalidArgument(fmt::format(
            "grad of {} under vmap: its custom_vjp rule reads values traced for one slice, "
            "which vmap cannot batch; take the gradient inside the vmapped function instead",
            function));
      };
    }
    return {lax::bind(make_operation<CustomVjpOp>(function_, rule, true), moved), 0};
  }

 private:
  std::string function_;
  lax::VjpRule rule_;
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
