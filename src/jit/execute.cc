#include "jit/execute.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <string>
#include <utility>

#include "compute/psum_then.h"
#include "jit/fuse.h"
#include "jit/ops/layout.h"
#include "jit/ops/padding.h"
#include "jit/ops/reduction.h"
#include "jit/step_profile.h"
#include "spmd/error.h"
#include "spmd/named_collectives.h"

namespace spmd::compiler {
namespace {

// The first `count` steps of a fused step's body as a chain (kernels/chain.h) over its inputs.
// A broadcast in the body (fuse.h) is one more input, its operand read in place where the
// backend reads broadcasts so, else the broadcast made whole first (held in `made`).
struct Chain {
  std::vector<kernels::Input> inputs;
  std::vector<size_t> input_bytes;  // each input's element size
  std::vector<kernels::ChainStep> steps;
  std::vector<Block> made;
};

Chain chain_of(const KernelContext& device, const Step& f, size_t count,
               const std::vector<Block>& slots) {
  Chain c;
  for (int slot : f.inputs) {
    const Block& b = slots[static_cast<size_t>(slot)];
    c.inputs.push_back({b.bytes().data(), b.size()});
    c.input_bytes.push_back(dtype_size(b.dtype()));
  }
  // Where each slot the chain reads comes from, a chain input or an earlier chain step, and its
  // dtype: a few entries, searched in order (no allocation per entry on this per-call path).
  struct Source {
    int slot;
    int32_t arg;
    DType dtype;
  };
  std::vector<Source> sources;
  sources.reserve(f.inputs.size() + count);
  for (size_t i = 0; i < f.inputs.size(); ++i) {
    sources.push_back({f.inputs[i], kernels::chain_input(static_cast<int>(i)),
                       slots[static_cast<size_t>(f.inputs[i])].dtype()});
  }
  const auto source_of = [&sources](int slot) {
    return *std::find_if(sources.begin(), sources.end(),
                         [slot](const Source& s) { return s.slot == slot; });
  };
  for (size_t k = 0; k < count; ++k) {
    const Step& s = f.body[k];
    if (dynamic_cast<const BroadcastOp*>(s.operation.get()) != nullptr) {
      const Block& from = slots[static_cast<size_t>(s.inputs[0])];
      const std::optional<BroadcastRead> read = broadcast_read(from.shape(), s.shape);
      if (read && device.backend.reads_broadcasts()) {
        c.inputs.push_back({from.bytes().data(), read->period, read->repeat});
      } else {
        c.made.push_back(s.operation->run(device, s, {&from, 1}));
        c.inputs.push_back({c.made.back().bytes().data(), c.made.back().size()});
      }
      c.input_bytes.push_back(dtype_size(s.dtype));
      sources.push_back(
          {s.output, kernels::chain_input(static_cast<int>(c.inputs.size()) - 1), s.dtype});
      continue;
    }
    std::array<int32_t, 3> args{};
    std::array<DType, 3> dtypes{};
    for (size_t i = 0; i < s.inputs.size(); ++i) {
      const Source from = source_of(s.inputs[i]);
      args[i] = from.arg;
      dtypes[i] = from.dtype;
    }
    const auto* op = static_cast<const ElementwiseOperation*>(s.operation.get());
    c.steps.push_back(op->chain_step({dtypes.data(), s.inputs.size()}, s.dtype));
    c.steps.back().args = args;
    sources.push_back(
        {s.output, kernels::chain_result(static_cast<int>(c.steps.size()) - 1), s.dtype});
  }
  return c;
}

// A fused chain (fuse.h) as one call of the backend's chain (kernels/chain.h): the CPU runs it in
// blocks whose intermediates stay in cache, so each input is read once and the result written
// once.
Block run_fused(const KernelContext& device, const Step& f, const std::vector<Block>& slots) {
  const Chain c = chain_of(device, f, f.body.size(), slots);
  Block out = device.allocate(f.dtype, f.shape);
  device.backend.chain(c.steps, c.inputs, out.mutable_bytes().data(), out.size());
  return out;
}

// A chain and the reduction of its result (fuse.h: fuse_reductions): the reduction's last axis
// (ReduceOp reduces its axes from the last), or the trailing axes XLA sums as one row
// (kernels/reduce.h: merged_trailing_axes), in one pass where the backend fuses them, the chain
// then that reduction where it does not; the reduction's other axes after, one at a time.
Block run_fused_reduce(const KernelContext& device, const Step& f,
                       const std::vector<Block>& slots) {
  const Step& chained = f.body[f.body.size() - 2];
  const Step& reduction = f.body.back();
  const auto& op = static_cast<const ReduceOp&>(*reduction.operation);
  const Chain c = chain_of(device, f, f.body.size() - 1, slots);
  const int merged =
      kernels::merged_trailing_axes(op.fn, chained.dtype, f.dtype, chained.shape, op.axes);
  const Shape shape = merged >= 2 ? merged_view(chained.shape, merged) : chained.shape;
  const auto axis = merged >= 2 ? shape.size() - 1 : static_cast<size_t>(op.axes.back());
  const int64_t extent = shape[axis];
  int64_t outer = 1, inner = 1;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (d < axis) outer *= shape[d];
    if (d > axis) inner *= shape[d];
  }
  Shape kept = shape;
  kept.erase(kept.begin() + static_cast<std::ptrdiff_t>(axis));
  Block x = device.allocate(f.dtype, kept);
  if (extent == 0 || !device.backend.chain_reduce(c.steps, c.inputs, outer, extent, inner, op.fn,
                                                  x.mutable_bytes().data())) {
    Block whole = device.allocate(chained.dtype, shape);
    device.backend.chain(c.steps, c.inputs, whole.mutable_bytes().data(), whole.size());
    device.backend.reduce(op.fn, chained.dtype, whole.bytes().data(), shape, static_cast<int>(axis),
                          f.dtype, x.mutable_bytes().data());
  }
  for (auto it = op.axes.rbegin() + std::max(merged, 1); it != op.axes.rend(); ++it) {
    Shape out_shape = x.shape();
    out_shape.erase(out_shape.begin() + *it);
    Block out = device.allocate(f.dtype, out_shape);
    device.backend.reduce(op.fn, f.dtype, x.bytes().data(), x.shape(), static_cast<int>(*it),
                          f.dtype, out.mutable_bytes().data());
    x = std::move(out);
  }
  return x;
}

// A psum and the chain reading it, run in the all-reduce (fuse.h: fuse_psum_chains): the chain
// over each range of the sum the all-reduce hands it, reading the same range of its whole-size
// inputs (its other inputs are single elements).
Block run_psum_then(const KernelContext& device, const Step& f, const Mesh& mesh,
                    const std::vector<Block>& slots) {
  const Chain c = chain_of(device, f, f.body.size(), slots);  // input 0 stands for the sum
  const int64_t whole = shape_size(f.shape);
  const AllReduceEpilogue then = [&](const std::byte* sum, std::byte* out, size_t first, size_t n) {
    std::vector<kernels::Input> in = c.inputs;
    in[0] = {sum, static_cast<int64_t>(n)};
    for (size_t k = 1; k < in.size(); ++k) {
      if (in[k].elements != whole || in[k].repeat != 1) continue;
      in[k].data += first * c.input_bytes[k];
      in[k].elements = static_cast<int64_t>(n);
    }
    device.backend.chain(c.steps, in, out, static_cast<int64_t>(n));
  };
  return psum_then(slots[static_cast<size_t>(f.inputs[0])], AxisEntry(axis_names(f.axes, mesh)),
                   then);
}

// This device's part of a whole dimension: from axis_index × the part's length, the last parts
// of an uneven split ending in zeros.
Block local_slice(const KernelContext& device, const Step& s, const Block& x,
                  const AxisEntry& axes) {
  const auto d = static_cast<size_t>(s.dim);
  const int64_t length = s.shape[d];
  const int64_t start = std::min(axis_index(axes) * length, x.shape()[d]);
  std::vector<int64_t> from(x.shape().size(), 0);
  from[d] = start;
  Shape kept = s.shape;
  kept[d] = std::min(length, x.shape()[d] - start);
  Block out = device.allocate(s.dtype, kept);
  device.backend.slice(dtype_size(s.dtype), x.bytes().data(), x.shape(), from, kept,
                       out.mutable_bytes().data());
  return padded(device, std::move(out), s.dim, length);
}

// The devices a collective step's axes span.
int64_t parts(const Step& s, const Mesh& mesh) { return axes_size(s.axes, mesh); }

// The blocks step `s` reads: moved out of the slots it reads last (s.last_use_of, which are
// freed after it anyway), so that they are not copied and are owned by the step alone; copied
// from the others.
std::vector<Block> step_inputs(const Step& s, std::vector<Block>& slots) {
  std::vector<Block> in;
  in.reserve(s.inputs.size());
  for (size_t j = 0; j < s.inputs.size(); ++j) {
    const int i = s.inputs[j];
    const bool last =
        std::find(s.last_use_of.begin(), s.last_use_of.end(), i) != s.last_use_of.end() &&
        std::find(s.inputs.begin() + static_cast<std::ptrdiff_t>(j) + 1, s.inputs.end(), i) ==
            s.inputs.end();
    Block& slot = slots[static_cast<size_t>(i)];
    in.push_back(last ? std::move(slot) : slot);
  }
  return in;
}

Block run_step(const KernelContext& device, const Step& s, const Mesh& mesh,
               std::vector<Block>& slots) {
  if (s.kind == StepKind::kFused) return run_fused(device, s, slots);
  if (s.kind == StepKind::kFusedReduce) return run_fused_reduce(device, s, slots);
  if (s.kind == StepKind::kPsumThen) return run_psum_then(device, s, mesh, slots);
  const std::vector<Block> in = step_inputs(s, slots);
  if (s.kind == StepKind::kCompute) return s.operation->run(device, s, in);
  const AxisEntry axes(axis_names(s.axes, mesh));
  switch (s.kind) {
    case StepKind::kPsum:
      return psum(in[0], axes);
    case StepKind::kPmax:
      return pmax(in[0], axes);
    case StepKind::kPmin:
      return pmin(in[0], axes);
    case StepKind::kAllGather:
      return trimmed(device, all_gather(in[0], axes, s.dim, true), s.shape);
    case StepKind::kPsumScatter:
      return psum_scatter(padded(device, in[0], s.dim, parts(s, mesh) * s.shape[size_t(s.dim)]),
                          axes, s.dim, true);
    case StepKind::kAllToAll:
      return trimmed(
          device,
          all_to_all(padded(device, in[0], s.dim, parts(s, mesh) * s.shape[size_t(s.dim)]), axes,
                     s.dim, s.dim2, true),
          s.shape);
    case StepKind::kLocalSlice:
      return local_slice(device, s, in[0], axes);
    default:
      return in[0];
  }
}

// What a step is, for the profile (step_profile.h): its operation, a fused chain's length, or
// its kind's name in the program's text.
std::string step_name(const Step& s) {
  switch (s.kind) {
    case StepKind::kCompute:
      return s.operation->name();
    case StepKind::kFused:
      return fmt::format("fused chain of {}", s.body.size());
    case StepKind::kFusedReduce:
      return fmt::format("fused chain of {} and its reduction", s.body.size() - 1);
    case StepKind::kPsumThen:
      return fmt::format("psum and a chain of {}", s.body.size());
    default:
      return std::string(step_kind_name(s.kind));
  }
}

// Step `k`'s block, from `kept` when it gives the same block at every call.
Block run_or_kept(const KernelContext& device, const LocalProgram& local, size_t k,
                  std::vector<Block>& slots, KeptSteps* kept) {
  const Step& s = local.steps[k];
  const bool constant = kept != nullptr && s.kind == StepKind::kCompute && s.inputs.empty() &&
                        s.operation->same_at_every_call();
  if (!constant) return run_step(device, s, local.mesh, slots);
  if (std::optional<Block> there = kept->find(k, device.memory)) return *there;
  Block made = run_step(device, s, local.mesh, slots);
  if (made.nbytes() <= KeptSteps::kKeptBytes) kept->keep(k, made);
  return made;
}

}  // namespace

std::optional<Block> KeptSteps::find(size_t step, MemorySpace memory) const {
  const std::lock_guard lock(mu_);
  if (step >= blocks_.size() || !blocks_[step] || blocks_[step]->memory() != memory) {
    return std::nullopt;
  }
  return blocks_[step];
}

void KeptSteps::keep(size_t step, const Block& block) {
  const std::lock_guard lock(mu_);
  if (blocks_.size() <= step) blocks_.resize(step + 1);
  blocks_[step] = block;
}

std::vector<Block> execute(const LocalProgram& local, const KernelContext& device,
                           std::vector<Block>& inputs, KeptSteps* kept) {
  std::vector<Block> slots(static_cast<size_t>(local.slots));
  for (size_t i = 0; i < local.parameters.size(); ++i) {
    if (inputs[i].memory() != device.memory) {
      throw InvalidArgument(fmt::format(
          "jit: input {} is in {} memory, but the device's backend '{}' computes in {} memory", i,
          inputs[i].memory().to_string(), device.backend.platform(), device.memory.to_string()));
    }
    slots[static_cast<size_t>(local.parameters[i].slot)] = std::move(inputs[i]);
  }
  StepProfile* const profile = StepProfile::active();
  for (size_t k = 0; k < local.steps.size(); ++k) {
    const Step& s = local.steps[k];
    {
      const std::string what = profile ? step_name(s) : std::string();
      const ProfiledScope timed(profile, what);
      slots[static_cast<size_t>(s.output)] = run_or_kept(device, local, k, slots, kept);
    }
    // Values no later step reads go now, so a device holds only what is still ahead of it.
    for (int done : s.last_use_of) slots[static_cast<size_t>(done)] = Block();
  }
  std::vector<Block> out;
  for (const Edge& o : local.outputs) out.push_back(slots[static_cast<size_t>(o.slot)]);
  return out;
}

}  // namespace spmd::compiler
