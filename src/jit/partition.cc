// Forward sharding propagation: each live operation's own sharding rule (Operation::partition,
// in src/jit/ops/) in program order, then the outputs' layouts (those jax.jit would give them,
// propagation.h, where it can tell), fusion and the program's text.
#include "jit/partition.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "jit/fuse.h"
#include "jit/hints.h"
#include "jit/ops/parameter.h"
#include "jit/partitioner.h"
#include "jit/propagation.h"
#include "jit/sharding_in_types.h"
#include "spmd/error.h"

namespace spmd::compiler {
namespace {

// Each slot's last reader frees it, so that a device holds only the values still ahead of it.
void mark_last_uses(LocalProgram& local) {
  std::vector<int> last(static_cast<size_t>(local.slots), -1);
  for (size_t i = 0; i < local.steps.size(); ++i) {
    for (int in : local.steps[i].inputs) last[static_cast<size_t>(in)] = static_cast<int>(i);
  }
  for (int out : local.output_slots) last[static_cast<size_t>(out)] = -1;
  for (size_t slot = 0; slot < last.size(); ++slot) {
    if (last[slot] >= 0)
      local.steps[static_cast<size_t>(last[slot])].last_use_of.push_back(static_cast<int>(slot));
  }
}

// The traced program, each live value with the layout propagation gave it: the step between the
// trace and the per-device program.
std::string global_text(const Program& program, const Partitioner& p, const std::vector<bool>& live,
                        const std::string& name) {
  std::string text = fmt::format("jit({}), global program with layouts:\n", name);
  for (size_t v = 0; v < program.ops.size(); ++v) {
    const Op& op = program.ops[v];
    const bool laid_out = live[v] || op.is<ParameterOp>();
    text += fmt::format("  {}  : {}\n", op_line(op, static_cast<int>(v)),
                        laid_out ? layout_text(p.layout(static_cast<int>(v)), p.mesh()) : "unused");
  }
  std::string ret = "  return";
  for (int out : program.outputs) ret += fmt::format(" %{}", out);
  return text + ret + "\n";
}

// On a mesh with Explicit axes, what is asked of each value carries its type's Explicit axes, so
// that a rule with nothing to go on makes it in its type at once.
void type_hints(const Program& program, const Mesh& mesh,
                std::vector<std::optional<Layout>>& hints) {
  for (size_t v = 0; v < program.ops.size(); ++v) {
    const Op& op = program.ops[v];
    const Layout asked =
        held_layout(hints[v] ? *hints[v] : Layout::replicated(op.shape.size()), op.spec, mesh);
    hints[v] = is_replicated(asked) ? std::nullopt : std::optional<Layout>(asked);
  }
}

}  // namespace

std::string program_text(const Program& program, const LocalProgram& local, const Mesh& mesh,
                         const std::string& name);

LocalProgram partition(const Program& program, const Mesh& mesh,
                       const std::vector<Layout>& in_layouts,
                       const std::vector<std::optional<Layout>>& out_layouts,
                       const std::string& name) {
  Partitioner p(program, mesh, name);
  std::vector<std::optional<Layout>> hints = backward_hints(program, out_layouts);
  const bool typed = has_explicit_axes(mesh);
  if (typed) type_hints(program, mesh, hints);
  p.set_hints(std::move(hints));
  const std::vector<bool> live = live_values(program);
  for (size_t v = 0; v < program.ops.size(); ++v) {
    const Op& op = program.ops[v];
    if (const auto* param = op.as<ParameterOp>()) {
      const Layout& l = in_layouts[static_cast<size_t>(param->index)];
      const int slot = p.new_slot();
      p.result().parameter_slots.push_back(slot);
      p.define(static_cast<int>(v), slot, l);
    } else if (live[v]) {
      op.operation->partition(p, static_cast<int>(v), op);
      if (typed)
        p.hold(static_cast<int>(v), held_layout(p.layout(static_cast<int>(v)), op.spec, mesh));
    }
  }
  LocalProgram& result = p.result();
  result.in_layouts = in_layouts;
  const bool all_given = std::all_of(out_layouts.begin(), out_layouts.end(),
                                     [](const auto& l) { return l.has_value(); });
  const auto jax =
      all_given ? std::nullopt : propagate_like_jax(program, mesh, in_layouts, out_layouts);
  for (size_t i = 0; i < program.outputs.size(); ++i) {
    const int v = program.outputs[i];
    const Layout want = out_layouts[i] ? *out_layouts[i]
                        : jax          ? (*jax)[static_cast<size_t>(v)]
                                       : p.layout(v).settled();
    result.output_slots.push_back(p.slot_with(v, want));
    result.out_layouts.push_back(want);
  }
  result.global_text = global_text(program, p, live, name);
  fuse_elementwise(result);
  mark_last_uses(result);
  result.text = program_text(program, result, mesh, name);
  return std::move(result);
}

}  // namespace spmd::compiler
