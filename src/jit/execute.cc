#include "jit/execute.h"

#include <Eigen/Core>
#include <algorithm>
#include <map>
#include <span>
#include <utility>

#include "kernels/elementwise.h"
#include "kernels/layout.h"
#include "kernels/matmul.h"
#include "kernels/reduce.h"
#include "spmd/named_collectives.h"

namespace spmd::compiler {
namespace {

using kernels::Input;

Input input(const Block& b) { return {b.bytes().data(), b.size()}; }

std::byte* output(Block& b) { return b.mutable_bytes().data(); }

Block full_of(double value, DType dtype, const Shape& shape) {
  Block out = Block::uninitialized(dtype, shape);
  kernels::convert(DType::kFloat64, dtype, {reinterpret_cast<const std::byte*>(&value), 1},
                   output(out), out.size());
  return out;
}

Block iota(DType dtype, const Shape& shape) {
  const Eigen::ArrayXd values =
      Eigen::ArrayXd::LinSpaced(shape[0], 0, static_cast<double>(shape[0] - 1));
  Block out = Block::uninitialized(dtype, shape);
  kernels::convert(DType::kFloat64, dtype,
                   {reinterpret_cast<const std::byte*>(values.data()), shape[0]}, output(out),
                   shape[0]);
  return out;
}

struct Operand {
  Input data;
  DType dtype;
};

// One element-wise operation over n elements (each operand n elements or one).
void elementwise(const Op& op, DType dtype, std::span<const Operand> in, std::byte* out,
                 int64_t n) {
  switch (op.kind) {
    case OpKind::kUnary:
      kernels::unary(static_cast<kernels::Unary>(op.code), dtype, in[0].data, out, n);
      return;
    case OpKind::kBinary:
      kernels::binary(static_cast<kernels::Binary>(op.code), in[0].dtype, in[0].data, in[1].data,
                      out, n);
      return;
    case OpKind::kSelect:
      kernels::select(dtype, in[0].data, in[1].data, in[2].data, out, n);
      return;
    case OpKind::kConvert:
      kernels::convert(in[0].dtype, dtype, in[0].data, out, n);
      return;
    default:
      return;
  }
}

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
Block run_fused(const Program& program, const Step& f, const std::vector<Block>& slots) {
  const int64_t n = shape_size(f.shape);
  Block out = Block::uninitialized(f.dtype, f.shape);
  std::byte* result = output(out);
  const size_t steps = f.body.size();
  std::vector<std::vector<std::byte>> tiles(steps - 1);
  std::map<int, size_t> tile_of;  // slot -> position in the chain
  for (size_t i = 0; i + 1 < steps; ++i) {
    tiles[i].resize(kTile * dtype_size(f.body[i].dtype));
    tile_of[f.body[i].output] = i;
  }
  std::vector<std::vector<Source>> sources(steps);
  for (size_t i = 0; i < steps; ++i) {
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
      elementwise(program.ops[static_cast<size_t>(f.body[i].op)], f.body[i].dtype, operands, dst,
                  len);
    }
  }
  return out;
}

Block reduce(const Op& op, Block x) {
  // One axis at a time, the last first, so that the remaining axes keep their numbers.
  for (auto it = op.ints.rbegin(); it != op.ints.rend(); ++it) {
    Shape shape = x.shape();
    shape.erase(shape.begin() + *it);
    Block out = Block::uninitialized(op.dtype, shape);
    kernels::reduce(static_cast<kernels::Reduce>(op.code), x.dtype(), x.bytes().data(), x.shape(),
                    static_cast<int>(*it), op.dtype, output(out));
    x = std::move(out);
  }
  return x;
}

Block dot(const Step& s, const Block& a, const Block& b) {
  const Shape& as = a.shape();
  kernels::MatmulShape m;
  for (size_t d = 0; d + 2 < as.size(); ++d) m.batch *= as[d];
  m.m = as[as.size() - 2];
  m.k = as.back();
  m.n = b.shape().back();
  Block out = Block::uninitialized(s.dtype, s.shape);
  kernels::matmul(s.dtype, m, a.bytes().data(), b.bytes().data(), output(out));
  return out;
}

// The operations that write a new block of the step's shape.
void compute_into(const Op& op, const Step& s, const std::vector<Block>& in, Block& out) {
  const size_t width = dtype_size(s.dtype);
  switch (op.kind) {
    case OpKind::kUnary:
    case OpKind::kBinary:
    case OpKind::kSelect:
    case OpKind::kConvert: {
      std::vector<Operand> operands;
      operands.reserve(in.size());
      for (const Block& b : in) operands.push_back({input(b), b.dtype()});
      elementwise(op, s.dtype, operands, output(out), out.size());
      return;
    }
    case OpKind::kBroadcast:
      kernels::broadcast(width, in[0].bytes().data(), in[0].shape(), output(out), s.shape);
      return;
    case OpKind::kTranspose: {
      std::vector<int> perm(s.ints.begin(), s.ints.end());
      kernels::transpose(width, in[0].bytes().data(), in[0].shape(), perm, output(out));
      return;
    }
    case OpKind::kArgmax:
      kernels::argmax(in[0].dtype(), in[0].bytes().data(), in[0].shape(),
                      static_cast<int>(op.ints[0]), output(out));
      return;
    case OpKind::kSlice:
      kernels::slice(width, in[0].bytes().data(), in[0].shape(), s.ints, s.shape, output(out));
      return;
    case OpKind::kConcat: {
      std::vector<const std::byte*> parts;
      std::vector<Shape> shapes;
      for (const Block& b : in) {
        parts.push_back(b.bytes().data());
        shapes.push_back(b.shape());
      }
      kernels::concatenate(width, parts, shapes, static_cast<int>(op.ints[0]), output(out));
      return;
    }
    default:
      return;
  }
}

Block compute(const Op& op, const Step& s, const std::vector<Block>& in) {
  // Operations whose result is a block of their own (or a view) allocate nothing here.
  switch (op.kind) {
    case OpKind::kParameter:
    case OpKind::kConstraint:
      return in.empty() ? Block() : in[0];
    case OpKind::kConstant:
      return Block(*op.constant);
    case OpKind::kFull:
      return full_of(op.scalar, s.dtype, s.shape);
    case OpKind::kIota:
      return iota(s.dtype, s.shape);
    case OpKind::kReshape:
      return in[0].reshape(s.shape);
    case OpKind::kReduce:
      return reduce(op, in[0]);
    case OpKind::kDot:
      return dot(s, in[0], in[1]);
    default:
      break;
  }
  Block out = Block::uninitialized(s.dtype, s.shape);
  compute_into(op, s, in, out);
  return out;
}

Block local_slice(const Step& s, const Block& x, const AxisEntry& axes) {
  std::vector<int64_t> start(x.shape().size(), 0);
  start[static_cast<size_t>(s.dim)] = axis_index(axes) * s.shape[static_cast<size_t>(s.dim)];
  Block out = Block::uninitialized(s.dtype, s.shape);
  kernels::slice(dtype_size(s.dtype), x.bytes().data(), x.shape(), start, s.shape, output(out));
  return out;
}

Block run_step(const Program& program, const Step& s, const Mesh& mesh,
               const std::vector<Block>& slots) {
  std::vector<Block> in;
  for (int i : s.inputs) in.push_back(slots[static_cast<size_t>(i)]);
  const AxisEntry axes(axis_names(s.axes, mesh));
  switch (s.kind) {
    case StepKind::kCompute:
      return compute(program.ops[static_cast<size_t>(s.op)], s, in);
    case StepKind::kPsum:
      return psum(in[0], axes);
    case StepKind::kPmax:
      return pmax(in[0], axes);
    case StepKind::kPmin:
      return pmin(in[0], axes);
    case StepKind::kAllGather:
      return all_gather(in[0], axes, s.dim, true);
    case StepKind::kPsumScatter:
      return psum_scatter(in[0], axes, s.dim, true);
    case StepKind::kAllToAll:
      return all_to_all(in[0], axes, s.dim, s.dim2, true);
    case StepKind::kLocalSlice:
      return local_slice(s, in[0], axes);
    case StepKind::kFused:
      return run_fused(program, s, slots);
  }
  return in[0];
}

}  // namespace

std::vector<Block> execute(const Program& program, const LocalProgram& local, const Mesh& mesh,
                           std::vector<Block>& inputs) {
  std::vector<Block> slots(static_cast<size_t>(local.slots));
  for (size_t i = 0; i < local.parameter_slots.size(); ++i) {
    slots[static_cast<size_t>(local.parameter_slots[i])] = std::move(inputs[i]);
  }
  for (const Step& s : local.steps) {
    slots[static_cast<size_t>(s.output)] = run_step(program, s, mesh, slots);
    // Values no later step reads go now, so a device holds only what is still ahead of it.
    for (int done : s.last_use_of) slots[static_cast<size_t>(done)] = Block();
  }
  std::vector<Block> out;
  for (int slot : local.output_slots) out.push_back(slots[static_cast<size_t>(slot)]);
  return out;
}

}  // namespace spmd::compiler
