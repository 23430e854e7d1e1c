#include "jit/hints.h"

namespace spmd::compiler {

std::vector<std::optional<Layout>> backward_hints(const Program& program) {
  std::vector<std::optional<Layout>> hints(program.ops.size());
  const std::vector<std::optional<Layout>> asked = asked_output_layouts(program);
  for (size_t i = 0; i < program.outputs.size(); ++i) {
    if (asked[i]) hints[static_cast<size_t>(program.outputs[i].value)] = asked[i];
  }
  // What operations ask of their operands whatever their own layout (sharding constraints);
  // these win over what later uses carry back.
  for (const Op& op : program.ops) {
    for (int in : op.inputs) {
      auto asked =
          op.operation->operand_hint(op, program.ops[static_cast<size_t>(in)].shape, nullptr);
      if (asked) hints[static_cast<size_t>(in)] = std::move(asked);
    }
  }
  for (size_t v = program.ops.size(); v-- > 0;) {
    if (!hints[v]) continue;
    const Op& op = program.ops[v];
    for (int in : op.inputs) {
      if (hints[static_cast<size_t>(in)]) continue;
      hints[static_cast<size_t>(in)] =
          op.operation->operand_hint(op, program.ops[static_cast<size_t>(in)].shape, &*hints[v]);
    }
  }
  return hints;
}

}  // namespace spmd::compiler
