// Forward sharding propagation, one rule per kind of operation (jit.h states the rules), and the
// per-device program's text.
#include "jit/partition.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <set>

#include "jit/fuse.h"
#include "jit/hints.h"
#include "jit/partitioner.h"
#include "spmd/error.h"

namespace spmd::compiler {
namespace {

bool overlaps(const std::vector<int>& axes, const std::set<int>& used) {
  return std::any_of(axes.begin(), axes.end(), [&](int a) { return used.count(a) != 0; });
}

// The value's layout without its pending sum: what a use that needs whole values asks for.
Layout settled(Layout l) {
  l.partial.clear();
  return l;
}

// Element-wise: per dimension, the first operand (of the result's rank) that splits it, unless
// its axes are taken by an earlier dimension.
Layout elementwise_layout(Partitioner& p, const Op& op) {
  Layout out = Layout::replicated(op.shape.size());
  std::set<int> used;
  for (size_t d = 0; d < op.shape.size(); ++d) {
    for (int in : op.inputs) {
      const Layout& l = p.layout(in);
      if (l.dims.size() != op.shape.size() || l.dims[d].empty() || overlaps(l.dims[d], used))
        continue;
      out.dims[d] = l.dims[d];
      used.insert(l.dims[d].begin(), l.dims[d].end());
      break;
    }
  }
  return out;
}

void elementwise(Partitioner& p, int v, const Op& op) {
  Layout out = elementwise_layout(p, op);
  if (is_replicated(out) && p.hint(v)) out = settled(*p.hint(v));
  std::vector<int> slots;
  for (int in : op.inputs) {
    const bool scalar = p.program().ops[static_cast<size_t>(in)].shape.empty();
    slots.push_back(p.slot_with(in, scalar ? Layout::replicated(0) : out));
  }
  p.compute(v, slots, out);
}

// A broadcast is made where it is used, at the size and split the use wants (materialize()).
void broadcast(Partitioner& p, int v, const Op& op) {
  const Shape& from = p.program().ops[static_cast<size_t>(op.inputs[0])].shape;
  const Layout& in = p.layout(op.inputs[0]);
  Layout out = Layout::replicated(op.shape.size());
  const size_t offset = op.shape.size() - from.size();
  for (size_t d = 0; d < from.size(); ++d) {
    if (from[d] == op.shape[d + offset]) out.dims[d + offset] = in.dims[d];
  }
  if (is_replicated(out) && p.hint(v)) out = settled(*p.hint(v));
  p.define_lazily(v, out);
}

void transpose(Partitioner& p, int v, const Op& op) {
  Layout in = settled(p.layout(op.inputs[0]));
  if (is_replicated(in) && p.hint(v)) {
    for (size_t i = 0; i < op.ints.size(); ++i) {
      in.dims[static_cast<size_t>(op.ints[i])] = p.hint(v)->dims[i];
    }
  }
  Layout out = Layout::replicated(op.shape.size());
  for (size_t i = 0; i < op.ints.size(); ++i)
    out.dims[i] = in.dims[static_cast<size_t>(op.ints[i])];
  p.compute(v, {p.slot_with(op.inputs[0], in)}, out, op.ints);
}

// Reshape keeps a split where its dimension survives: the same size after the same number of
// elements, or the major part of a merge (in[d] leads a group of input dimensions that make one
// output dimension) or of a split (in[d] becomes output dimensions whose first divides evenly).
void reshape(Partitioner& p, int v, const Op& op) {
  const Shape& from = p.program().ops[static_cast<size_t>(op.inputs[0])].shape;
  Layout in = settled(p.layout(op.inputs[0]));
  Layout out = Layout::replicated(op.shape.size());
  int64_t before_in = 1;
  for (size_t d = 0; d < from.size(); before_in *= from[d], ++d) {
    if (in.dims[d].empty()) continue;
    int64_t before_out = 1;
    size_t j = 0;
    while (j < op.shape.size() && before_out < before_in) before_out *= op.shape[j++];
    while (j < op.shape.size() && op.shape[j] == 1 && from[d] != 1) ++j;
    const int64_t parts = axes_size(in.dims[d], p.mesh());
    const bool keeps = before_out == before_in && j < op.shape.size() && op.shape[j] % parts == 0 &&
                       (op.shape[j] % from[d] == 0 || from[d] % op.shape[j] == 0);
    if (keeps) {
      out.dims[j] = in.dims[d];
    } else {
      in.dims[d].clear();
    }
  }
  p.compute(v, {p.slot_with(op.inputs[0], in)}, out);
}

void reduce(Partitioner& p, int v, const Op& op) {
  const Layout in = settled(p.layout(op.inputs[0]));
  Layout out;
  std::vector<int> across;
  for (size_t d = 0; d < in.dims.size(); ++d) {
    const bool reduced =
        std::find(op.ints.begin(), op.ints.end(), static_cast<int64_t>(d)) != op.ints.end();
    if (reduced) {
      across.insert(across.end(), in.dims[d].begin(), in.dims[d].end());
    } else {
      out.dims.push_back(in.dims[d]);
    }
  }
  const auto code = static_cast<kernels::Reduce>(op.code);
  if (code == kernels::Reduce::kSum || across.empty()) {
    out.partial = across;  // summed across devices when used
    p.compute(v, {p.slot_with(op.inputs[0], in)}, out, op.ints);
    return;
  }
  // max and min across devices at once: no pending state for them.
  const int local = p.emit_compute(v, {p.slot_with(op.inputs[0], in)}, out, op.ints);
  const StepKind across_devices = code == kernels::Reduce::kMax ? StepKind::kPmax : StepKind::kPmin;
  p.define(v, p.emit_collective(across_devices, local, v, out, across), out);
}

// The dimension an operation works along stays whole.
void along_whole(Partitioner& p, int v, const Op& op, const std::vector<size_t>& whole) {
  Layout in = settled(p.layout(op.inputs[0]));
  for (size_t d : whole) in.dims[d].clear();
  Layout out = in;
  if (op.kind == OpKind::kArgmax) out.dims.erase(out.dims.begin() + op.ints[0]);
  std::vector<int> slots;
  for (int input : op.inputs) slots.push_back(p.slot_with(input, in));
  std::vector<int64_t> ints = op.ints;
  if (op.kind == OpKind::kSlice) {
    for (size_t d = 0; d < ints.size(); ++d) {
      if (!in.dims[d].empty()) ints[d] = 0;  // a split, unsliced dimension: all of the local part
    }
  }
  p.compute(v, slots, out, ints);
}

// (B…, M, K) · (B…, K, N): batch dimensions from either side, K split alike on both sides
// (partial sums), M from the left and N from the right unless their axes are taken.
void dot(Partitioner& p, int v, const Op& op) {
  const Layout l = settled(p.layout(op.inputs[0]));
  const Layout r = settled(p.layout(op.inputs[1]));
  const size_t rank = op.shape.size(), b = rank - 2;
  Layout lhs = Layout::replicated(rank), rhs = Layout::replicated(rank),
         out = Layout::replicated(rank);
  std::set<int> used;
  auto take = [&](const std::vector<int>& axes) -> std::vector<int> {
    if (axes.empty() || overlaps(axes, used)) return {};
    used.insert(axes.begin(), axes.end());
    return axes;
  };
  for (size_t d = 0; d < b; ++d) {
    out.dims[d] = lhs.dims[d] = rhs.dims[d] = take(l.dims[d].empty() ? r.dims[d] : l.dims[d]);
  }
  const std::vector<int> k = take(l.dims[b + 1].empty() ? r.dims[b] : l.dims[b + 1]);
  lhs.dims[b + 1] = rhs.dims[b] = k;
  out.partial = k;
  out.dims[b] = lhs.dims[b] = take(l.dims[b]);
  out.dims[b + 1] = rhs.dims[b + 1] = take(r.dims[b + 1]);
  p.compute(v, {p.slot_with(op.inputs[0], lhs), p.slot_with(op.inputs[1], rhs)}, out);
}

void concat(Partitioner& p, int v, const Op& op) {
  along_whole(p, v, op, {static_cast<size_t>(op.ints[0])});
}

// lax::shard_map: a block is its value's slot relabelled (local shape, treated as replicated), and
// back; psum is a collective over its axes.
void manual(Partitioner& p, int v, const Op& op) {
  const Layout blocks = Layout::replicated(op.shape.size());
  if (op.kind == OpKind::kManualIn) {
    p.define(v, p.slot_with(op.inputs[0], layout_of(*op.sharding, op.shape.size())), blocks);
  } else if (op.kind == OpKind::kManualOut) {
    p.define(v, p.slot_with(op.inputs[0], blocks), layout_of(*op.sharding, op.shape.size()));
  } else {
    const std::vector<int> axes(op.ints.begin(), op.ints.end());
    p.define(v,
             p.emit_collective(StepKind::kPsum, p.slot_with(op.inputs[0], blocks), v, blocks, axes),
             blocks);
  }
}

void define_op(Partitioner& p, int v, const Op& op) {
  switch (op.kind) {
    case OpKind::kParameter:
      break;  // defined from the inputs
    case OpKind::kConstant:
    case OpKind::kFull:
    case OpKind::kIota:
      p.compute(v, {}, Layout::replicated(op.shape.size()));
      break;
    case OpKind::kUnary:
    case OpKind::kBinary:
    case OpKind::kSelect:
    case OpKind::kConvert:
      elementwise(p, v, op);
      break;
    case OpKind::kBroadcast:
      broadcast(p, v, op);
      break;
    case OpKind::kReshape:
      reshape(p, v, op);
      break;
    case OpKind::kTranspose:
      transpose(p, v, op);
      break;
    case OpKind::kReduce:
      reduce(p, v, op);
      break;
    case OpKind::kArgmax:
      along_whole(p, v, op, {static_cast<size_t>(op.ints[0])});
      break;
    case OpKind::kDot:
      dot(p, v, op);
      break;
    case OpKind::kSlice: {
      const Shape& from = p.program().ops[static_cast<size_t>(op.inputs[0])].shape;
      std::vector<size_t> sliced;
      for (size_t d = 0; d < from.size(); ++d) {
        if (from[d] != op.shape[d]) sliced.push_back(d);
      }
      along_whole(p, v, op, sliced);
      break;
    }
    case OpKind::kConcat:
      concat(p, v, op);
      break;
    case OpKind::kConstraint: {
      const Layout want = layout_of(*op.sharding, op.shape.size());
      p.define(v, p.slot_with(op.inputs[0], want), want);
      break;
    }
    case OpKind::kManualIn:
    case OpKind::kManualOut:
    case OpKind::kAxisSum:
      manual(p, v, op);
      break;
  }
}

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

// The values the outputs depend on. The rest is never lowered: a traced function's unused values,
// and in a backward program the cotangents nobody asked for (grad of the weights does not need
// the input's gradient, nor the forward results the rules do not read).
std::vector<bool> live_values(const Program& program) {
  std::vector<bool> live(program.ops.size(), false);
  for (int out : program.outputs) live[static_cast<size_t>(out)] = true;
  for (size_t v = program.ops.size(); v-- > 0;) {
    if (!live[v]) continue;
    for (int in : program.ops[v].inputs) live[static_cast<size_t>(in)] = true;
  }
  return live;
}

}  // namespace

std::string program_text(const Program& program, const LocalProgram& local, const Mesh& mesh,
                         const std::string& name);

LocalProgram partition(const Program& program, const Mesh& mesh,
                       const std::vector<Layout>& in_layouts,
                       const std::vector<std::optional<Layout>>& out_layouts,
                       const std::string& name) {
  Partitioner p(program, mesh, name);
  p.set_hints(backward_hints(program, out_layouts));
  const std::vector<bool> live = live_values(program);
  for (size_t v = 0; v < program.ops.size(); ++v) {
    const Op& op = program.ops[v];
    if (op.kind == OpKind::kParameter) {
      const Layout& l = in_layouts[static_cast<size_t>(op.ints[0])];
      p.local(static_cast<int>(v), op.shape, l);  // checks divisibility
      const int slot = p.new_slot();
      p.result().parameter_slots.push_back(slot);
      p.define(static_cast<int>(v), slot, l);
    } else if (live[v]) {
      define_op(p, static_cast<int>(v), op);
    }
  }
  LocalProgram& result = p.result();
  result.in_layouts = in_layouts;
  for (size_t i = 0; i < program.outputs.size(); ++i) {
    const int v = program.outputs[i];
    const Layout want = out_layouts[i] ? *out_layouts[i] : settled(p.layout(v));
    result.output_slots.push_back(p.slot_with(v, want));
    result.out_layouts.push_back(want);
  }
  fuse_elementwise(program, result);
  mark_last_uses(result);
  result.text = program_text(program, result, mesh, name);
  return std::move(result);
}

}  // namespace spmd::compiler
