// Forward sharding propagation: each live operation's own sharding rule (Operation::partition,
// in src/jit/ops/) in program order, then the outputs' layouts (those jax.jit would give them,
// propagation.h, where it can tell), fusion and the program's text.
#include "jit/partition.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <numeric>

#include "jit/common_steps.h"
#include "jit/contract.h"
#include "jit/fuse.h"
#include "jit/hints.h"
#include "jit/manual.h"
#include "jit/ops/parameter.h"
#include "jit/partitioner.h"
#include "jit/propagation.h"
#include "jit/sharding_in_types.h"
#include "jit/simplify.h"
#include "kernels/backend.h"
#include "spmd/error.h"

namespace spmd::compiler {
namespace {

// Each slot's last reader frees it, so that a device holds only the values still ahead of it.
void mark_last_uses(LocalProgram& local) {
  std::vector<int> last(static_cast<size_t>(local.slots), -1);
  for (size_t i = 0; i < local.steps.size(); ++i) {
    for (int in : local.steps[i].inputs) last[static_cast<size_t>(in)] = static_cast<int>(i);
  }
  for (const Edge& out : local.outputs) last[static_cast<size_t>(out.slot)] = -1;
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
  return text + "  " + return_line(program) + "\n";
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

// An edge of the per-device program: value `value` of `program` in `slot`, laid out as
// `sharding`.
Edge edge(const Program& program, const Mesh& mesh, int value, int slot,
          std::shared_ptr<const NamedSharding> sharding) {
  const Op& op = program.ops[static_cast<size_t>(value)];
  const Layout layout = layout_of(*sharding, op.shape.size());
  std::vector<int> dims(op.shape.size());
  std::iota(dims.begin(), dims.end(), 0);
  const bool padded = !padded_dims(op.shape, layout, mesh, dims).empty();
  return Edge{slot,  op.dtype, op.shape, std::move(sharding), local_shape(op.shape, layout, mesh),
              padded};
}

// The sharding output `out` leaves in: its own when out_shardings gave one (the same object),
// else `layout`, the one the partitioner settled on.
std::shared_ptr<const NamedSharding> output_sharding(const Output& out, const Layout& layout,
                                                     const Mesh& mesh) {
  if (out.sharding) return out.sharding;
  return std::make_shared<const NamedSharding>(mesh, spec_of(layout, mesh));
}

// LocalProgram::varying: each recorded slot's layout axes, and its value's manual variation
// inside a shard_map (where the partitioner sees blocks as replicated).
void record_variation(const Program& program, const Partitioner& p, LocalProgram& local) {
  const std::vector<Varying> manual = varying_axes(program);
  std::vector<bool> known(static_cast<size_t>(local.slots), false);
  local.varying.assign(static_cast<size_t>(local.slots), 0);
  for (size_t v = 0; v < program.ops.size(); ++v) {
    for (const auto& [layout, slot] : p.versions(static_cast<int>(v))) {
      known[static_cast<size_t>(slot)] = true;
      local.varying[static_cast<size_t>(slot)] |= axis_bits(layout.used_axes()) | manual[v].axes;
    }
  }
  for (size_t slot = 0; slot < known.size(); ++slot) {
    if (!known[slot]) local.varying[slot] = ~uint64_t{0};
  }
}

}  // namespace

LocalProgram partition(const Program& traced, const Mesh& mesh, const std::string& name,
                       bool contract_products) {
  const Program program = simplified_like_xla(traced);
  Partitioner p(program, mesh, name);
  std::vector<std::optional<Layout>> hints = backward_hints(program);
  const bool typed = has_explicit_axes(mesh);
  if (typed) type_hints(program, mesh, hints);
  p.set_hints(std::move(hints));
  const std::vector<bool> live = live_values(program);
  p.result().parameters.resize(static_cast<size_t>(program.parameters));
  for (size_t v = 0; v < program.ops.size(); ++v) {
    const Op& op = program.ops[v];
    if (const auto* param = op.as<ParameterOp>()) {
      const int slot = p.new_slot();
      p.result().parameters.at(static_cast<size_t>(param->index)) =
          edge(program, mesh, static_cast<int>(v), slot, param->shared_sharding());
      p.define(static_cast<int>(v), slot, layout_of(*param->sharding(), op.shape.size()));
    } else if (live[v]) {
      op.operation->partition(p, static_cast<int>(v), op);
      if (typed)
        p.hold(static_cast<int>(v), held_layout(p.layout(static_cast<int>(v)), op.spec, mesh));
    }
  }
  LocalProgram& result = p.result();
  const std::vector<std::optional<Layout>> asked = asked_output_layouts(program);
  const bool all_given =
      std::all_of(asked.begin(), asked.end(), [](const auto& l) { return l.has_value(); });
  const auto jax = all_given ? std::nullopt : propagate_like_jax(program, mesh);
  for (size_t i = 0; i < program.outputs.size(); ++i) {
    const int v = program.outputs[i].value;
    const Layout want = asked[i] ? *asked[i]
                        : jax    ? (*jax)[static_cast<size_t>(v)]
                                 : p.layout(v).settled();
    result.outputs.push_back(edge(program, mesh, v, p.slot_with(v, want),
                                  output_sharding(program.outputs[i], want, mesh)));
  }
  result.name = name;
  result.global_text = global_text(program, p, live, name);
  record_variation(program, p, result);
  drop_redundant_steps(result);
  fuse_elementwise(result);
  fuse_reductions(result);
  fuse_psum_chains(result);
  if (contract_products &&
      kernels::backend_for(mesh.devices().front().platform()).contracts_multiply_add()) {
    contract_multiply_adds(result);
  }
  mark_last_uses(result);
  return std::move(result);
}

}  // namespace spmd::compiler
