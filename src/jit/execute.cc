#include "jit/execute.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "jit/ops/padding.h"
#include "spmd/error.h"
#include "spmd/named_collectives.h"

namespace spmd::compiler {
namespace {

// Where a fused step's operand comes from: an earlier step of the chain, else the fused step's
// input reading that slot.
int32_t chain_arg(const Step& f, size_t k, int slot) {
  for (size_t j = 0; j < k; ++j) {
    if (f.body[j].output == slot) return kernels::chain_result(static_cast<int>(j));
  }
  const auto at = std::find(f.inputs.begin(), f.inputs.end(), slot);
  return kernels::chain_input(static_cast<int>(at - f.inputs.begin()));
}

// A fused chain (fuse.h) as one call of the backend's chain (kernels/chain.h): the CPU runs it in
// blocks whose intermediates stay in cache, so each input is read once and the result written
// once.
Block run_fused(const KernelContext& device, const Step& f, const std::vector<Block>& slots) {
  std::vector<kernels::Input> inputs;
  for (int slot : f.inputs) {
    const Block& b = slots[static_cast<size_t>(slot)];
    inputs.push_back({b.bytes().data(), b.size()});
  }
  std::vector<kernels::ChainStep> chain;
  std::vector<DType> dtypes;
  for (size_t k = 0; k < f.body.size(); ++k) {
    const Step& s = f.body[k];
    std::array<int32_t, 3> args{};
    dtypes.clear();
    for (size_t i = 0; i < s.inputs.size(); ++i) {
      args[i] = chain_arg(f, k, s.inputs[i]);
      dtypes.push_back(args[i] >= 0 ? slots[static_cast<size_t>(s.inputs[i])].dtype()
                                    : f.body[static_cast<size_t>(-1 - args[i])].dtype);
    }
    const auto* op = static_cast<const ElementwiseOperation*>(s.operation.get());
    chain.push_back(op->chain_step(dtypes, s.dtype));
    chain.back().args = args;
  }
  Block out = device.allocate(f.dtype, f.shape);
  device.backend.chain(chain, inputs, out.mutable_bytes().data(), out.size());
  return out;
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

Block run_step(const KernelContext& device, const Step& s, const Mesh& mesh,
               const std::vector<Block>& slots) {
  if (s.kind == StepKind::kFused) return run_fused(device, s, slots);
  std::vector<Block> in;
  in.reserve(s.inputs.size());
  for (int i : s.inputs) in.push_back(slots[static_cast<size_t>(i)]);
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

}  // namespace

std::vector<Block> execute(const LocalProgram& local, const KernelContext& device,
                           std::vector<Block>& inputs) {
  std::vector<Block> slots(static_cast<size_t>(local.slots));
  for (size_t i = 0; i < local.parameters.size(); ++i) {
    if (inputs[i].memory() != device.memory) {
      throw InvalidArgument(fmt::format(
          "jit: input {} is in {} memory, but the device's backend '{}' computes in {} memory", i,
          inputs[i].memory().to_string(), device.backend.platform(), device.memory.to_string()));
    }
    slots[static_cast<size_t>(local.parameters[i].slot)] = std::move(inputs[i]);
  }
  for (const Step& s : local.steps) {
    slots[static_cast<size_t>(s.output)] = run_step(device, s, local.mesh, slots);
    // Values no later step reads go now, so a device holds only what is still ahead of it.
    for (int done : s.last_use_of) slots[static_cast<size_t>(done)] = Block();
  }
  std::vector<Block> out;
  for (const Edge& o : local.outputs) out.push_back(slots[static_cast<size_t>(o.slot)]);
  return out;
}

}  // namespace spmd::compiler
