// The layout family (layout.h).
#include "jit/ops/layout.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "jit/batching.h"
#include "jit/lax.h"
#include "jit/op_registry.h"
#include "jit/partitioner.h"
#include "jit/program.h"
#include "spmd/error.h"
#include "spmd/sharding.h"

namespace spmd::compiler {

namespace {

// The operand layout that gives a broadcast result `want`: surviving dimensions take its split.
Layout broadcast_operand(const Shape& from, const Shape& to, const Layout& want) {
  Layout in = Layout::replicated(from.size());
  const size_t offset = to.size() - from.size();
  for (size_t d = 0; d < from.size(); ++d) {
    if (from[d] == to[d + offset]) in.dims[d] = want.dims[d + offset];
  }
  return in;
}

}  // namespace

// --- broadcast ---

ValueType BroadcastOp::result_type(std::span<const ValueType> operands) const {
  check_operand_count("broadcast", operands, 1);
  const ValueType& in = operands[0];
  bool fits = in.shape.size() <= shape.size();
  for (size_t d = 0; fits && d < in.shape.size(); ++d) {
    const int64_t from = in.shape[d], to = shape[d + shape.size() - in.shape.size()];
    fits = from == to || from == 1;
  }
  if (!fits) {
    throw InvalidArgument(fmt::format("broadcast: cannot broadcast ({}) to ({})",
                                      fmt::join(in.shape, ","), fmt::join(shape, ",")));
  }
  return {in.dtype, shape};
}

void BroadcastOp::partition(Partitioner& p, int value, const Op& op) const {
  const Shape& from = p.op(op.inputs[0]).shape;
  const Layout& in = p.layout(op.inputs[0]);
  Layout out = Layout::replicated(op.shape.size());
  const size_t offset = op.shape.size() - from.size();
  for (size_t d = 0; d < from.size(); ++d) {
    if (from[d] == op.shape[d + offset]) out.dims[d + offset] = in.dims[d];
  }
  if (is_replicated(out) && p.hint(value)) out = p.hint(value)->settled();
  const int operand = op.inputs[0];
  p.define_lazily(value, out, [operand, from, to = op.shape](Partitioner& q, const Layout& want) {
    return std::vector<int>{q.slot_with(operand, broadcast_operand(from, to, want))};
  });
}

std::optional<Layout> BroadcastOp::operand_hint(const Op& op, const Shape& operand,
                                                const Layout* result) const {
  if (result == nullptr) return std::nullopt;
  return broadcast_operand(operand, op.shape, *result);
}

std::optional<FactorRule> BroadcastOp::factor_rule(std::span<const ValueType> operands,
                                                   const ValueType& result) const {
  FactorRule rule;
  rule.family = FactorRule::Family::kBroadcast;
  const Shape& in = operands[0].shape;
  rule.operands.emplace_back(in.size(), -1);
  const size_t lead = result.shape.size() - in.size();
  for (size_t d = 0; d < result.shape.size(); ++d) {
    const int64_t size = result.shape[d];
    if (d < lead) {
      rule.result.push_back(rule.add(size));
      continue;
    }
    int& operand_dim = rule.operands[0][d - lead];
    const bool expanded = in[d - lead] == 1 && size != 1;
    if (expanded) operand_dim = rule.add(1);
    rule.result.push_back(rule.add(size));
    if (!expanded) operand_dim = rule.result.back();
  }
  return rule;
}

Block BroadcastOp::run(const KernelContext& device, const Step& step,
                       std::span<const Block> in) const {
  Block out = device.allocate(step.dtype, step.shape);
  device.backend.broadcast(dtype_size(step.dtype), in[0].bytes().data(), in[0].shape(),
                           out.mutable_bytes().data(), step.shape);
  return out;
}

Cotangents BroadcastOp::vjp(const Op& /*op*/, const Tensor& /*result*/,
                            std::span<const Tensor> /*operands*/, const Tensor& g) const {
  return {g};
}

Batched BroadcastOp::batch(const Op& /*op*/, std::span<const Batched> operands,
                           int64_t size) const {
  // Each slice's dimensions aligned at the right of `shape`, after the slices' own.
  Shape from = operands[0].value.shape();
  from.erase(from.begin() + *operands[0].dim);
  Shape aligned(shape.size() - from.size(), 1);
  aligned.insert(aligned.begin(), size);
  aligned.insert(aligned.end(), from.begin(), from.end());
  Shape to = shape;
  to.insert(to.begin(), size);
  const Tensor x = lax::reshape(batched_first(operands[0], size), aligned);
  return {lax::bind(make_operation<BroadcastOp>(std::move(to)), {x}), 0};
}

// --- reshape ---

ValueType ReshapeOp::result_type(std::span<const ValueType> operands) const {
  check_operand_count("reshape", operands, 1);
  const ValueType& in = operands[0];
  if (shape_size(in.shape) != shape_size(shape)) {
    throw InvalidArgument(fmt::format("reshape: ({}) and ({}) hold different numbers of elements",
                                      fmt::join(in.shape, ","), fmt::join(shape, ",")));
  }
  return {in.dtype, shape};
}

// A split survives where its dimension does: the same size after the same number of elements,
// or the major part of a merge (in[d] leads a group of input dimensions that make one output
// dimension) or of a split (in[d] becomes output dimensions whose first divides evenly).
void ReshapeOp::partition(Partitioner& p, int value, const Op& op) const {
  const Shape& from = p.op(op.inputs[0]).shape;
  Layout in = p.layout(op.inputs[0]).settled();
  Layout out = Layout::replicated(op.shape.size());
  int64_t before_in = 1;
  for (size_t d = 0; d < from.size(); before_in *= from[d], ++d) {
    if (in.dims[d].empty()) continue;
    int64_t before_out = 1;
    size_t j = 0;
    while (j < op.shape.size() && before_out < before_in) before_out *= op.shape[j++];
    while (j < op.shape.size() && op.shape[j] == 1 && from[d] != 1) ++j;
    const int64_t parts = axes_size(in.dims[d], p.mesh());
    // An uneven split keeps only a dimension that stays as it is: its padding would land
    // among the elements of a merged or divided one.
    const bool even = from[d] % parts == 0;
    // (An empty dimension divides nothing: it keeps its split only where it stays as it is.)
    const auto divides = [](int64_t a, int64_t b) { return a != 0 && b != 0 && b % a == 0; };
    const bool keeps = before_out == before_in && j < op.shape.size() &&
                       (even ? op.shape[j] % parts == 0 &&
                                   (op.shape[j] == from[d] || divides(from[d], op.shape[j]) ||
                                    divides(op.shape[j], from[d]))
                             : op.shape[j] == from[d]);
    if (keeps) {
      out.dims[j] = in.dims[d];
    } else {
      in.dims[d].clear();
    }
  }
  p.compute(value, {p.slot_with(op.inputs[0], in)}, out);
}

std::optional<FactorRule> ReshapeOp::factor_rule(std::span<const ValueType> operands,
                                                 const ValueType& result) const {
  const Shape& in = operands[0].shape;
  const Shape& out = result.shape;
  FactorRule rule;
  rule.operands.emplace_back(in.size(), -1);
  rule.result.assign(out.size(), -1);
  size_t i = 0, o = 0;
  while (i < in.size() || o < out.size()) {
    if (i < in.size() && o < out.size() && in[i] == out[o]) {
      const int f = rule.add(in[i]);
      rule.operands[0][i++] = f;
      rule.result[o++] = f;
    } else if (i < in.size() && in[i] == 1) {
      rule.operands[0][i++] = rule.add(1);
    } else if (o < out.size() && out[o] == 1) {
      rule.result[o++] = rule.add(1);
    } else {
      return std::nullopt;  // merges or splits dimensions
    }
  }
  rule.family =
      out.size() > in.size() ? FactorRule::Family::kBroadcast : FactorRule::Family::kMovesElements;
  return rule;
}

Block ReshapeOp::run(const KernelContext& /*device*/, const Step& step,
                     std::span<const Block> in) const {
  return in[0].reshape(step.shape);  // the same elements: no kernel
}

Cotangents ReshapeOp::vjp(const Op& /*op*/, const Tensor& /*result*/,
                          std::span<const Tensor> operands, const Tensor& g) const {
  return {lax::reshape(g, operands[0].shape())};
}

Batched ReshapeOp::batch(const Op& /*op*/, std::span<const Batched> operands, int64_t size) const {
  Shape to = shape;
  to.insert(to.begin(), size);
  return on_slices_first(make_operation<ReshapeOp>(std::move(to)), operands[0], size);
}

// --- transpose ---

std::string TransposeOp::attributes() const {
  return fmt::format("permutation={{{}}}", fmt::join(permutation, ","));
}

ValueType TransposeOp::result_type(std::span<const ValueType> operands) const {
  check_operand_count("transpose", operands, 1);
  const ValueType& in = operands[0];
  std::vector<int64_t> sorted = permutation;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size(); ++i) {
    if (sorted[i] != static_cast<int64_t>(i) || sorted.size() != in.shape.size()) {
      throw InvalidArgument(fmt::format("transpose: {{{}}} is not a permutation of {} axes",
                                        fmt::join(permutation, ","), in.shape.size()));
    }
  }
  Shape out;
  for (int64_t d : permutation) out.push_back(in.shape[static_cast<size_t>(d)]);
  return {in.dtype, out};
}

void TransposeOp::partition(Partitioner& p, int value, const Op& op) const {
  Layout in = p.layout(op.inputs[0]).settled();
  if (is_replicated(in) && p.hint(value)) in = *operand_hint(op, {}, &*p.hint(value));
  Layout out = Layout::replicated(op.shape.size());
  for (size_t i = 0; i < permutation.size(); ++i)
    out.dims[i] = in.dims[static_cast<size_t>(permutation[i])];
  p.compute(value, {p.slot_with(op.inputs[0], in)}, out);
}

std::optional<Layout> TransposeOp::operand_hint(const Op& /*op*/, const Shape& /*operand*/,
                                                const Layout* result) const {
  if (result == nullptr) return std::nullopt;
  Layout l = Layout::replicated(permutation.size());
  for (size_t i = 0; i < permutation.size(); ++i)
    l.dims[static_cast<size_t>(permutation[i])] = result->dims[i];
  return l;
}

std::optional<FactorRule> TransposeOp::factor_rule(std::span<const ValueType> operands,
                                                   const ValueType& result) const {
  FactorRule rule;
  rule.family = FactorRule::Family::kMovesElements;
  rule.operands.emplace_back(operands[0].shape.size(), -1);
  for (size_t d = 0; d < result.shape.size(); ++d) {
    rule.result.push_back(rule.add(result.shape[d]));
    rule.operands[0][static_cast<size_t>(permutation[d])] = rule.result.back();
  }
  return rule;
}

Block TransposeOp::run(const KernelContext& device, const Step& step,
                       std::span<const Block> in) const {
  Block out = device.allocate(step.dtype, step.shape);
  const std::vector<int> perm(permutation.begin(), permutation.end());
  device.backend.transpose(dtype_size(step.dtype), in[0].bytes().data(), in[0].shape(), perm,
                           out.mutable_bytes().data());
  return out;
}

Cotangents TransposeOp::vjp(const Op& /*op*/, const Tensor& /*result*/,
                            std::span<const Tensor> /*operands*/, const Tensor& g) const {
  std::vector<int64_t> inverse(permutation.size());
  for (size_t i = 0; i < permutation.size(); ++i)
    inverse[static_cast<size_t>(permutation[i])] = static_cast<int64_t>(i);
  return {lax::transpose(g, inverse)};
}

Batched TransposeOp::batch(const Op& /*op*/, std::span<const Batched> operands,
                           int64_t size) const {
  std::vector<int64_t> perm = {0};
  for (int64_t d : permutation) perm.push_back(d + 1);
  return on_slices_first(make_operation<TransposeOp>(std::move(perm)), operands[0], size);
}

// --- slice ---

std::string SliceOp::attributes() const {
  return fmt::format("start={{{}}}", fmt::join(start, ","));
}

ValueType SliceOp::result_type(std::span<const ValueType> operands) const {
  check_operand_count("slice", operands, 1);
  const ValueType& in = operands[0];
  bool fits = start.size() == in.shape.size() && extent.size() == in.shape.size();
  for (size_t d = 0; fits && d < start.size(); ++d) {
    fits = start[d] >= 0 && extent[d] >= 0 && start[d] + extent[d] <= in.shape[d];
  }
  if (!fits) {
    throw InvalidArgument(fmt::format("slice: start {{{}}} extent ({}) do not fit in ({})",
                                      fmt::join(start, ","), fmt::join(extent, ","),
                                      fmt::join(in.shape, ",")));
  }
  return {in.dtype, extent};
}

void SliceOp::partition(Partitioner& p, int value, const Op& op) const {
  const Shape& from = p.op(op.inputs[0]).shape;
  Layout in = p.layout(op.inputs[0]).settled();
  std::vector<int64_t> local_start = start;
  for (size_t d = 0; d < from.size(); ++d) {
    if (from[d] != extent[d]) {
      in.dims[d].clear();  // sliced: whole on every device
    } else if (!in.dims[d].empty()) {
      local_start[d] = 0;  // split and unsliced: all of the device's part
    }
  }
  p.compute(value, {p.slot_with(op.inputs[0], in)}, in,
            make_operation<SliceOp>(std::move(local_start), extent));
}

Block SliceOp::run(const KernelContext& device, const Step& step, std::span<const Block> in) const {
  Block out = device.allocate(step.dtype, step.shape);
  device.backend.slice(dtype_size(step.dtype), in[0].bytes().data(), in[0].shape(), start,
                       step.shape, out.mutable_bytes().data());
  return out;
}

Cotangents SliceOp::vjp(const Op& /*op*/, const Tensor& /*result*/,
                        std::span<const Tensor> operands, const Tensor& g) const {
  Tensor out = g;
  const Shape full = operands[0].shape();
  for (size_t d = 0; d < full.size(); ++d) {
    if (extent[d] == full[d]) continue;
    Shape before = out.shape(), after = out.shape();
    before[d] = start[d];
    after[d] = full[d] - start[d] - extent[d];
    out = lax::concatenate({lax::full(g.trace(), before, g.dtype(), 0), out,
                            lax::full(g.trace(), after, g.dtype(), 0)},
                           static_cast<int>(d));
  }
  return {out};
}

Batched SliceOp::batch(const Op& /*op*/, std::span<const Batched> operands, int64_t size) const {
  std::vector<int64_t> from = start;
  from.insert(from.begin(), 0);
  Shape box = extent;
  box.insert(box.begin(), size);
  return on_slices_first(make_operation<SliceOp>(std::move(from), std::move(box)), operands[0],
                         size);
}

// --- strided_slice ---

std::string StridedSliceOp::attributes() const {
  return fmt::format("start={{{}}} step={{{}}}", fmt::join(start, ","), fmt::join(step, ","));
}

ValueType StridedSliceOp::result_type(std::span<const ValueType> operands) const {
  check_operand_count("strided_slice", operands, 1);
  const ValueType& in = operands[0];
  const size_t rank = in.shape.size();
  bool fits = start.size() == rank && step.size() == rank && extent.size() == rank;
  for (size_t d = 0; fits && d < rank; ++d) {
    const int64_t last = start[d] + (extent[d] - 1) * step[d];
    fits = step[d] != 0 && extent[d] >= 0 &&
           (extent[d] == 0 ||
            (start[d] >= 0 && start[d] < in.shape[d] && last >= 0 && last < in.shape[d]));
  }
  if (!fits) {
    throw InvalidArgument(
        fmt::format("strided_slice: start {{{}}} step {{{}}} extent ({}) do not fit in ({})",
                    fmt::join(start, ","), fmt::join(step, ","), fmt::join(extent, ","),
                    fmt::join(in.shape, ",")));
  }
  return {in.dtype, extent};
}

void StridedSliceOp::partition(Partitioner& p, int value, const Op& op) const {
  const Shape& from = p.op(op.inputs[0]).shape;
  Layout in = p.layout(op.inputs[0]).settled();
  for (size_t d = 0; d < from.size(); ++d) {
    if (changes(from, d)) in.dims[d].clear();  // whole on every device
  }
  p.compute(value, {p.slot_with(op.inputs[0], in)}, in);
}

Block StridedSliceOp::run(const KernelContext& device, const Step& call,
                          std::span<const Block> in) const {
  Block out = device.allocate(call.dtype, call.shape);
  // A split dimension is read whole and in order: its local extent is the device's part.
  device.backend.strided_slice(dtype_size(call.dtype), in[0].bytes().data(), in[0].shape(), start,
                               step, call.shape, out.mutable_bytes().data());
  return out;
}

namespace {

// g (its dimension d of `count` elements, read `stride` > 1 apart) with stride - 1 zeros after
// each element but the last: (count - 1) * stride + 1 elements along d.
Tensor spread(const Tensor& g, size_t d, int64_t count, int64_t stride) {
  Shape shape = g.shape();
  Shape column = shape;
  column.insert(column.begin() + static_cast<std::ptrdiff_t>(d) + 1, 1);
  Shape zeros = column;
  zeros[d + 1] = stride - 1;
  const Tensor rows =
      lax::concatenate({lax::reshape(g, column), lax::full(g.trace(), zeros, g.dtype(), 0)},
                       static_cast<int>(d) + 1);
  shape[d] = count * stride;
  Shape kept = shape;
  kept[d] = (count - 1) * stride + 1;
  return lax::slice(lax::reshape(rows, shape), std::vector<int64_t>(shape.size(), 0), kept);
}

}  // namespace

Cotangents StridedSliceOp::vjp(const Op& /*op*/, const Tensor& /*result*/,
                               std::span<const Tensor> operands, const Tensor& g) const {
  Tensor out = g;
  const Shape full = operands[0].shape();
  for (size_t d = 0; d < full.size(); ++d) {
    if (!changes(full, d)) continue;
    Shape zeros = out.shape();
    zeros[d] = full[d];
    if (extent[d] == 0) {
      out = lax::full(g.trace(), zeros, g.dtype(), 0);
      continue;
    }
    int64_t first = start[d];  // the lowest index read along d
    if (step[d] < 0) {         // read backwards: the cotangent reversed is in index order
      std::vector<int64_t> from(full.size(), 0), by(full.size(), 1);
      from[d] = extent[d] - 1;
      by[d] = -1;
      out = lax::strided_slice(out, from, by, out.shape());
      first += (extent[d] - 1) * step[d];
    }
    const int64_t stride = std::abs(step[d]);
    if (stride > 1) out = spread(out, d, extent[d], stride);
    Shape before = out.shape(), after = out.shape();
    before[d] = first;
    after[d] = full[d] - first - out.shape()[d];
    // Zeros only where there are some: a reversal of the whole dimension (jnp.flip) is its
    // cotangent reversed, with no concatenation to type (an empty pad of another sharding than a
    // split cotangent's was a ShardingTypeError).
    std::vector<Tensor> parts;
    if (before[d] > 0) parts.push_back(lax::full(g.trace(), before, g.dtype(), 0));
    parts.push_back(out);
    if (after[d] > 0) parts.push_back(lax::full(g.trace(), after, g.dtype(), 0));
    if (parts.size() > 1) out = lax::concatenate(parts, static_cast<int>(d));
  }
  return {out};
}

Batched StridedSliceOp::batch(const Op& /*op*/, std::span<const Batched> operands,
                              int64_t size) const {
  std::vector<int64_t> from = start, by = step;
  from.insert(from.begin(), 0);
  by.insert(by.begin(), 1);
  Shape box = extent;
  box.insert(box.begin(), size);
  return on_slices_first(
      make_operation<StridedSliceOp>(std::move(from), std::move(by), std::move(box)), operands[0],
      size);
}

// --- concatenate ---

std::string ConcatenateOp::attributes() const { return fmt::format("axis={}", axis); }

ValueType ConcatenateOp::result_type(std::span<const ValueType> operands) const {
  if (operands.empty()) throw InvalidArgument("concatenate: takes at least one operand");
  const ValueType& first = operands[0];
  if (axis < 0 || axis >= static_cast<int>(first.shape.size())) {
    throw InvalidArgument(
        fmt::format("concatenate: axis {} of rank-{} operands", axis, first.shape.size()));
  }
  ValueType out = first;
  out.shape[static_cast<size_t>(axis)] = 0;
  for (const ValueType& t : operands) {
    Shape other = t.shape;
    if (other.size() == first.shape.size()) other[static_cast<size_t>(axis)] = 0;
    if (t.dtype != first.dtype || other != out.shape) {
      throw InvalidArgument(fmt::format("concatenate: {} does not match {} outside axis {}",
                                        type_text(t.dtype, t.shape),
                                        type_text(first.dtype, first.shape), axis));
    }
  }
  for (const ValueType& t : operands)
    out.shape[static_cast<size_t>(axis)] += t.shape[static_cast<size_t>(axis)];
  return out;
}

void ConcatenateOp::partition(Partitioner& p, int value, const Op& op) const {
  Layout in = p.layout(op.inputs[0]).settled();
  in.dims[static_cast<size_t>(axis)].clear();
  std::vector<int> slots;
  for (int input : op.inputs) slots.push_back(p.slot_with(input, in));
  p.compute(value, slots, in);
}

Block ConcatenateOp::run(const KernelContext& device, const Step& step,
                         std::span<const Block> in) const {
  Block out = device.allocate(step.dtype, step.shape);
  std::vector<const std::byte*> parts;
  std::vector<Shape> shapes;
  for (const Block& b : in) {
    parts.push_back(b.bytes().data());
    shapes.push_back(b.shape());
  }
  device.backend.concatenate(dtype_size(step.dtype), parts, shapes, axis,
                             out.mutable_bytes().data());
  return out;
}

Cotangents ConcatenateOp::vjp(const Op& /*op*/, const Tensor& /*result*/,
                              std::span<const Tensor> operands, const Tensor& g) const {
  Cotangents out;
  const auto along = static_cast<size_t>(axis);
  int64_t offset = 0;
  for (const Tensor& part : operands) {
    std::vector<int64_t> begin(g.shape().size(), 0);
    Shape extent = g.shape();
    begin[along] = offset;
    extent[along] = part.shape()[along];
    offset += extent[along];
    out.emplace_back(lax::slice(g, begin, extent));
  }
  return out;
}

Batched ConcatenateOp::batch(const Op& /*op*/, std::span<const Batched> operands,
                             int64_t size) const {
  std::vector<Tensor> parts;
  for (const Batched& b : operands) parts.push_back(batched_first(b, size));
  return {lax::bind(make_operation<ConcatenateOp>(axis + 1), parts), 0};
}

namespace {

const bool layout_registered = [] {
  register_operation("broadcast", [](const AttributeReader& r) {
    return make_operation<BroadcastOp>(r.result().shape);
  });
  register_operation("reshape", [](const AttributeReader& r) {
    return make_operation<ReshapeOp>(r.result().shape);
  });
  register_operation("transpose", [](const AttributeReader& r) {
    return make_operation<TransposeOp>(r.integers("permutation"));
  });
  register_operation("slice", [](const AttributeReader& r) {
    return make_operation<SliceOp>(r.integers("start"), r.result().shape);
  });
  register_operation("strided_slice", [](const AttributeReader& r) {
    return make_operation<StridedSliceOp>(r.integers("start"), r.integers("step"),
                                          r.result().shape);
  });
  register_operation("concatenate", [](const AttributeReader& r) {
    return make_operation<ConcatenateOp>(static_cast<int>(r.integer("axis")));
  });
  return true;
}();

}  // namespace

// --- the family's builders (lax.h) ---

namespace lax {

Tensor reshape(const Tensor& x, const Shape& shape) {
  if (x.shape() == shape) return x;
  return bind(make_operation<ReshapeOp>(shape), {x});
}

Tensor broadcast(const Tensor& x, const Shape& shape) {
  if (x.shape() == shape) return x;
  return bind(make_operation<BroadcastOp>(shape), {x});
}

Tensor expand_dims(const Tensor& x, int axis) {
  Shape shape = x.shape();
  shape.insert(shape.begin() + axis, 1);
  return reshape(x, shape);
}

Tensor transpose(const Tensor& x, const std::vector<int64_t>& perm) {
  bool identity = perm.size() == x.shape().size();
  for (size_t i = 0; identity && i < perm.size(); ++i)
    identity = perm[i] == static_cast<int64_t>(i);
  if (identity) return x;  // nothing moves (the operation checks a wrong perm's length)
  return bind(make_operation<TransposeOp>(perm), {x});
}

Tensor slice(const Tensor& x, const std::vector<int64_t>& start, const Shape& extent) {
  if (extent == x.shape()) return x;
  return bind(make_operation<SliceOp>(start, extent), {x});
}

Tensor strided_slice(const Tensor& x, const std::vector<int64_t>& start,
                     const std::vector<int64_t>& step, const Shape& extent) {
  return bind(make_operation<StridedSliceOp>(start, step, extent), {x});
}

Tensor concatenate(const std::vector<Tensor>& parts, int axis) {
  return bind(make_operation<ConcatenateOp>(axis), parts);
}

}  // namespace lax
}  // namespace spmd::compiler
