#include "jit/hints.h"

#include "jit/ops/parameter.h"

namespace spmd::compiler {

std::vector<std::optional<Layout>> backward_hints(
    const Program& program, const std::vector<std::optional<Layout>>& out_layouts) {
  std::vector<std::optional<Layout>> hints(program.ops.size());
  for (size_t i = 0; i < program.outputs.size(); ++i) {
    if (out_layouts[i]) hints[static_cast<size_t>(program.outputs[i])] = out_layouts[i];
  }
  // What an operation asks of its operands whatever its own layout (a sharding constraint's);
  // these win over what later uses carry back.
  const Layout none;
  for (const Op& op : program.ops) {
    if (!op.is<ConstraintOp>()) continue;
    for (int in : op.inputs) {
      hints[static_cast<size_t>(in)] =
          op.operation->operand_hint(op, program.ops[static_cast<size_t>(in)].shape, none);
    }
  }
  for (size_t v = program.ops.size(); v-- > 0;) {
    if (!hints[v]) continue;
    const Op& op = program.ops[v];
    for (int in : op.inputs) {
      if (hints[static_cast<size_t>(in)]) continue;
      hints[static_cast<size_t>(in)] =
          op.operation->operand_hint(op, program.ops[static_cast<size_t>(in)].shape, *hints[v]);
    }
  }
  return hints;
}

}  // namespace spmd::compiler
