#include "jit/hints.h"

namespace spmd::compiler {
namespace {

bool elementwise(OpKind k) {
  return k == OpKind::kUnary || k == OpKind::kBinary || k == OpKind::kSelect ||
         k == OpKind::kConvert;
}

// The hint `out` of a value, as its operand `in` of op `op` should be laid out.
std::optional<Layout> operand_hint(const Program& program, const Op& op, int in,
                                   const Layout& out) {
  const Shape& from = program.ops[static_cast<size_t>(in)].shape;
  if (elementwise(op.kind)) {
    if (from.size() != op.shape.size()) return std::nullopt;  // a scalar operand
    return out;
  }
  Layout l = Layout::replicated(from.size());
  if (op.kind == OpKind::kBroadcast) {
    const size_t offset = op.shape.size() - from.size();
    for (size_t d = 0; d < from.size(); ++d) {
      if (from[d] == op.shape[d + offset]) l.dims[d] = out.dims[d + offset];
    }
    return l;
  }
  if (op.kind == OpKind::kTranspose) {
    for (size_t i = 0; i < op.ints.size(); ++i)
      l.dims[static_cast<size_t>(op.ints[i])] = out.dims[i];
    return l;
  }
  return std::nullopt;
}

}  // namespace

bool is_replicated(const Layout& l) {
  if (!l.partial.empty()) return false;
  for (const auto& d : l.dims) {
    if (!d.empty()) return false;
  }
  return true;
}

std::vector<std::optional<Layout>> backward_hints(
    const Program& program, const std::vector<std::optional<Layout>>& out_layouts) {
  std::vector<std::optional<Layout>> hints(program.ops.size());
  for (size_t i = 0; i < program.outputs.size(); ++i) {
    if (out_layouts[i]) hints[static_cast<size_t>(program.outputs[i])] = out_layouts[i];
  }
  for (const Op& op : program.ops) {
    if (op.kind == OpKind::kConstraint) {
      hints[static_cast<size_t>(op.inputs[0])] = layout_of(*op.sharding, op.shape.size());
    }
  }
  for (size_t v = program.ops.size(); v-- > 0;) {
    if (!hints[v]) continue;
    const Op& op = program.ops[v];
    for (int in : op.inputs) {
      if (hints[static_cast<size_t>(in)]) continue;
      hints[static_cast<size_t>(in)] = operand_hint(program, op, in, *hints[v]);
    }
  }
  return hints;
}

}  // namespace spmd::compiler
