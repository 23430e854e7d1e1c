#include "jit/execute.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <utility>

#include "jit/ops/padding.h"
#include "spmd/error.h"
#include "spmd/named_collectives.h"

namespace spmd::compiler {
namespace {

// Elements per tile of a fused chain: every intermediate of a tile stays in the first levels of
// cache (4096 × 8 B = 32 KiB at most).
constexpr int64_t kTile = 4096;

// Where an operand of a fused step comes from: the tile buffer of an earlier step of the chain,
// or a block (its elements at the tile's offset, or its one element).
struct Source {
  const std::vector<std::byte>* tile = nullptr;
  const Block* block = nullptr;
  DType dtype = DType::kFloat32;
};

Operand operand_at(const Source& src, int64_t offset, int64_t len) {
  if (src.tile != nullptr) return {{src.tile->data(), len}, src.dtype};
  const std::byte* base = src.block->bytes().data();
  if (src.block->size() == 1) return {{base, 1}, src.dtype};
  return {{base + offset * static_cast<int64_t>(dtype_size(src.dtype)), len}, src.dtype};
}

// A fused chain (fuse.h), tile by tile: intermediates live in per-tile buffers, the last step
// writes the result. Every operand's source is resolved once, before the tiles.
Block run_fused(const KernelContext& device, const Step& f, const std::vector<Block>& slots) {
  const int64_t n = shape_size(f.shape);
  Block out = device.allocate(f.dtype, f.shape);
  std::byte* result = out.mutable_bytes().data();
  const size_t steps = f.body.size();
  std::vector<std::vector<std::byte>> tiles(steps - 1);
  std::map<int, size_t> tile_of;  // slot -> position in the chain
  for (size_t i = 0; i + 1 < steps; ++i) {
    tiles[i].resize(kTile * dtype_size(f.body[i].dtype));
    tile_of[f.body[i].output] = i;
  }
  std::vector<std::vector<Source>> sources(steps);
  std::vector<const ElementwiseOperation*> ops(steps);
  for (size_t i = 0; i < steps; ++i) {
    ops[i] = static_cast<const ElementwiseOperation*>(f.body[i].operation.get());
    for (int slot : f.body[i].inputs) {
      auto t = tile_of.find(slot);
      sources[i].push_back(t != tile_of.end()
                               ? Source{&tiles[t->second], nullptr, f.body[t->second].dtype}
                               : Source{nullptr, &slots[static_cast<size_t>(slot)],
                                        slots[static_cast<size_t>(slot)].dtype()});
    }
  }
  std::vector<Operand> operands;
  for (int64_t o = 0; o < n; o += kTile) {
    const int64_t len = std::min(kTile, n - o);
    for (size_t i = 0; i < steps; ++i) {
      operands.clear();
      for (const Source& src : sources[i]) operands.push_back(operand_at(src, o, len));
      std::byte* dst =
          i + 1 == steps ? result + o * static_cast<int64_t>(dtype_size(f.dtype)) : tiles[i].data();
      ops[i]->apply(device.backend, f.body[i].dtype, operands, dst, len);
    }
  }
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

std::vector<Block> execute(const LocalProgram& local, const Mesh& mesh, const KernelContext& device,
                           std::vector<Block>& inputs) {
  std::vector<Block> slots(static_cast<size_t>(local.slots));
  for (size_t i = 0; i < local.parameter_slots.size(); ++i) {
    if (inputs[i].memory() != device.memory) {
      throw InvalidArgument(fmt::format(
          "jit: input {} is in {} memory, but the device's backend '{}' computes in {} memory", i,
          inputs[i].memory().to_string(), device.backend.platform(), device.memory.to_string()));
    }
    slots[static_cast<size_t>(local.parameter_slots[i])] = std::move(inputs[i]);
  }
  for (const Step& s : local.steps) {
    slots[static_cast<size_t>(s.output)] = run_step(device, s, mesh, slots);
    // Values no later step reads go now, so a device holds only what is still ahead of it.
    for (int done : s.last_use_of) slots[static_cast<size_t>(done)] = Block();
  }
  std::vector<Block> out;
  for (int slot : local.output_slots) out.push_back(slots[static_cast<size_t>(slot)]);
  return out;
}

}  // namespace spmd::compiler
