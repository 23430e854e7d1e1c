// The reduction family: sums, maxima, minima and products over axes, and argmax along one.
#include "jit/ops/reduction.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <vector>

#include "jit/batching.h"
#include "jit/lax.h"
#include "jit/op_registry.h"
#include "jit/operation.h"
#include "jit/partitioner.h"
#include "jit/program.h"
#include "jit/sharding_in_types.h"
#include "kernels/reduce.h"
#include "spmd/error.h"

namespace spmd::compiler {

// "argmax": the index (int32) of the first maximum along `axis`, which the result drops.
class ArgmaxOp final : public Operation {
 public:
  explicit ArgmaxOp(int axis) : axis(axis) {}
  const int axis;

  std::string name() const override { return "argmax"; }
  std::string attributes() const override;
  ValueType result_type(std::span<const ValueType> operands) const override;
  // JAX's: the operand's entries without the axis's.
  PartitionSpec type_spec(std::span<const ValueType> operands, const ValueType& result,
                          const Mesh& mesh) const override;
  // The axis stays whole on every device.
  void partition(Partitioner& p, int value, const Op& op) const override;
  Block run(const KernelContext& device, const Step& step,
            std::span<const Block> in) const override;
  // Along the same axis of each slice.
  Batched batch(const Op& op, std::span<const Batched> operands, int64_t size) const override;
};

namespace {

int checked_axis(std::string_view what, int64_t axis, const Shape& shape) {
  if (axis < 0 || axis >= static_cast<int64_t>(shape.size())) {
    throw InvalidArgument(
        fmt::format("{}: axis {} of a rank-{} operand", what, axis, shape.size()));
  }
  return static_cast<int>(axis);
}

}  // namespace

// --- reduce ---

std::string ReduceOp::name() const { return "reduce_" + std::string(kernels::name(fn)); }

std::string ReduceOp::attributes() const {
  return fmt::format("axes={{{}}}", fmt::join(axes, ","));
}

namespace {

// `operand`'s type spec without the entries of the dimensions `dropped` names.
template <class Dropped>
PartitionSpec spec_without(const ValueType& operand, Dropped dropped) {
  std::vector<AxisEntry> kept;
  const std::vector<AxisEntry> entries = type_entries(operand);
  for (size_t d = 0; d < entries.size(); ++d) {
    if (!dropped(static_cast<int64_t>(d))) kept.push_back(entries[d]);
  }
  return canonical_spec(std::move(kept));
}

}  // namespace

PartitionSpec ReduceOp::type_spec(std::span<const ValueType> operands, const ValueType& /*result*/,
                                  const Mesh& /*mesh*/) const {
  return spec_without(operands[0],
                      [&](int64_t d) { return std::binary_search(axes.begin(), axes.end(), d); });
}

PartitionSpec ArgmaxOp::type_spec(std::span<const ValueType> operands, const ValueType& /*result*/,
                                  const Mesh& /*mesh*/) const {
  return spec_without(operands[0], [&](int64_t d) { return d == axis; });
}

ValueType ReduceOp::result_type(std::span<const ValueType> operands) const {
  check_operand_count(name(), operands, 1);
  const Shape& in = operands[0].shape;
  if (!std::is_sorted(axes.begin(), axes.end()) ||
      std::adjacent_find(axes.begin(), axes.end()) != axes.end()) {
    throw InvalidArgument(fmt::format("{}: axes {{{}}} are not ascending and distinct", name(),
                                      fmt::join(axes, ",")));
  }
  Shape out;
  for (size_t d = 0; d < in.size(); ++d) {
    if (!std::binary_search(axes.begin(), axes.end(), static_cast<int64_t>(d)))
      out.push_back(in[d]);
  }
  for (int64_t a : axes) checked_axis(name(), a, in);
  return {operands[0].dtype, out};
}

void ReduceOp::partition(Partitioner& p, int value, const Op& op) const {
  const Layout in = p.layout(op.inputs[0]).settled();
  Layout out;
  std::vector<int> across;
  for (size_t d = 0; d < in.dims.size(); ++d) {
    if (std::binary_search(axes.begin(), axes.end(), static_cast<int64_t>(d))) {
      across.insert(across.end(), in.dims[d].begin(), in.dims[d].end());
    } else {
      out.dims.push_back(in.dims[d]);
    }
  }
  if (fn == kernels::Reduce::kProd && !across.empty()) {
    // A product over a split dimension gathers it first (no all-reduce multiplies): each
    // device then multiplies the whole axis in the one order reduce() takes on one device, so
    // every mesh gives the same bits.
    Layout whole = in;
    for (int64_t axis : axes) whole.dims[static_cast<size_t>(axis)].clear();
    p.compute(value, {p.slot_with(op.inputs[0], whole)}, out);
    return;
  }
  // An uneven split's padding holds the reduction's identity before the local reduction.
  const PaddingFill identity = fn == kernels::Reduce::kSum   ? PaddingFill::kZero
                               : fn == kernels::Reduce::kMax ? PaddingFill::kLowest
                                                             : PaddingFill::kHighest;
  const int operand = p.fill_padding(op.inputs[0], p.slot_with(op.inputs[0], in), in,
                                     std::vector<int>(axes.begin(), axes.end()), identity);
  if (fn == kernels::Reduce::kSum || across.empty()) {
    out.partial = across;  // summed across devices when used
    p.compute(value, {operand}, out);
    return;
  }
  // max and min across devices at once: no pending state for them.
  const int local = p.emit_compute(value, {operand}, out);
  const StepKind across_devices = fn == kernels::Reduce::kMax ? StepKind::kPmax : StepKind::kPmin;
  p.define(value, p.emit_collective(across_devices, local, value, out, across), out);
}

std::optional<FactorRule> ReduceOp::factor_rule(std::span<const ValueType> operands,
                                                const ValueType& /*result*/) const {
  FactorRule rule;
  rule.operands.emplace_back();
  for (size_t d = 0; d < operands[0].shape.size(); ++d) {
    const bool reduced = std::binary_search(axes.begin(), axes.end(), static_cast<int64_t>(d));
    const int f = rule.add(operands[0].shape[d],
                           reduced ? FactorRule::Kind::kReduction : FactorRule::Kind::kPassThrough);
    rule.operands[0].push_back(f);
    if (!reduced) rule.result.push_back(f);
  }
  return rule;
}

Shape merged_view(const Shape& shape, int merged) {
  const auto kept = static_cast<std::ptrdiff_t>(shape.size()) - merged;
  Shape view(shape.begin(), shape.begin() + kept);
  int64_t row = 1;
  for (auto d = shape.begin() + kept; d != shape.end(); ++d) row *= *d;
  view.push_back(row);
  return view;
}

Block ReduceOp::run(const KernelContext& device, const Step& step,
                    std::span<const Block> in) const {
  // The trailing axes XLA sums as one row first (kernels/reduce.h: merged_trailing_axes), then
  // one axis at a time, the last first, so that the remaining axes keep their numbers.
  Block x = in[0];
  const int merged = kernels::merged_trailing_axes(fn, x.dtype(), step.dtype, x.shape(), axes);
  if (merged >= 2) {
    const Shape view = merged_view(x.shape(), merged);
    Block out = device.allocate(step.dtype, Shape(view.begin(), view.end() - 1));
    device.backend.reduce(fn, x.dtype(), x.bytes().data(), view, static_cast<int>(view.size()) - 1,
                          step.dtype, out.mutable_bytes().data());
    x = std::move(out);
  }
  for (auto it = axes.rbegin() + (merged >= 2 ? merged : 0); it != axes.rend(); ++it) {
    Shape shape = x.shape();
    shape.erase(shape.begin() + *it);
    Block out = device.allocate(step.dtype, shape);
    device.backend.reduce(fn, x.dtype(), x.bytes().data(), x.shape(), static_cast<int>(*it),
                          step.dtype, out.mutable_bytes().data());
    x = std::move(out);
  }
  return x;
}

namespace {

// The cotangent of a product over `axes` of x, for the cotangent g of the product: g times the
// product of every other element, as JAX's reduce_prod derivative computes it (lax.py's
// _reduce_jvp): the reduced axes moved last and flattened to n, then halved repeatedly, the
// first ceil(n/2) elements times the rest (padded with a 1), down to one; each element's
// cotangent goes back down the same tree, times its partner at every level. Exact where
// elements are zero (no division), JAX's products in JAX's order (its zeros' signs too), and
// built of slices, concatenations, products and a sum, so it has derivatives of its own.
Tensor product_cotangent(const Tensor& x, const std::vector<int64_t>& axes, const Tensor& g) {
  const auto rank = static_cast<int64_t>(x.shape().size());
  std::vector<int64_t> perm, inverse(static_cast<size_t>(rank));
  Shape kept, moved;
  for (int64_t d = 0; d < rank; ++d) {
    if (!std::binary_search(axes.begin(), axes.end(), d)) perm.push_back(d);
  }
  for (int64_t d : perm) kept.push_back(x.shape()[static_cast<size_t>(d)]);
  perm.insert(perm.end(), axes.begin(), axes.end());
  for (int64_t i = 0; i < rank; ++i) {
    inverse[static_cast<size_t>(perm[static_cast<size_t>(i)])] = i;
    moved.push_back(x.shape()[static_cast<size_t>(perm[static_cast<size_t>(i)])]);
  }
  int64_t n = 1;
  for (int64_t axis : axes) n *= x.shape()[static_cast<size_t>(axis)];
  if (n == 0) return lax::full_like(x, 0.0);  // no elements to reach
  const int last = static_cast<int>(kept.size());
  const auto shape_with = [&](int64_t length) {
    Shape s = kept;
    s.push_back(length);
    return s;
  };
  const auto part = [&](const Tensor& t, int64_t first, int64_t length) {
    std::vector<int64_t> start(kept.size() + 1, 0);
    start.back() = first;
    return lax::slice(t, start, shape_with(length));
  };
  struct Level {
    Tensor first, second;  // the halves multiplied, the second padded with a 1 where odd
    int64_t second_length;
  };
  std::vector<Level> levels;
  Tensor level = lax::reshape(lax::transpose(x, perm), shape_with(n));
  while (n > 1) {
    const int64_t n1 = (n + 1) / 2, n2 = n - n1;
    Tensor second = part(level, n1, n2);
    if (n2 != n1) {
      // A 1 typed as the level's column (its sharding in types), so that the two concatenate.
      second = lax::concatenate({second, lax::full_like(part(level, 0, 1), 1.0)}, last);
    }
    levels.push_back({part(level, 0, n1), second, n2});
    level = levels.back().first * levels.back().second;
    n = n1;
  }
  Tensor cotangent = lax::reshape(g, shape_with(1));
  for (auto it = levels.rbegin(); it != levels.rend(); ++it) {
    const Tensor spread = lax::broadcast(cotangent, it->first.shape());
    Tensor to_second = spread * it->first;
    if (it->second_length != it->first.shape().back()) {
      to_second = part(to_second, 0, it->second_length);
    }
    cotangent = lax::concatenate({spread * it->second, to_second}, last);
  }
  // JAX's slices transpose to pads of +0 added together, so its cotangents are never -0 once the
  // tree has a level: + 0 makes ours the same.
  if (!levels.empty()) {
    cotangent = lax::binary(kernels::Binary::kAdd, cotangent, lax::full_like(cotangent, 0.0));
  }
  return lax::transpose(lax::reshape(cotangent, moved), inverse);
}

}  // namespace

Cotangents ReduceOp::vjp(const Op& /*op*/, const Tensor& y, std::span<const Tensor> operands,
                         const Tensor& g) const {
  const Tensor& x = operands[0];
  if (fn == kernels::Reduce::kProd) return {product_cotangent(x, axes, g)};
  Shape kept = x.shape();
  for (int64_t axis : axes) kept[static_cast<size_t>(axis)] = 1;
  const Tensor spread = lax::broadcast(lax::reshape(g, kept), x.shape());
  if (fn == kernels::Reduce::kSum) return {spread};
  // max/min: shared evenly among the elements equal to the result.
  const Tensor chosen = lax::convert_element_type(
      lax::binary(kernels::Binary::kEq, x, lax::broadcast(lax::reshape(y, kept), x.shape())),
      g.dtype());
  return {spread * chosen / lax::reshape(lax::reduce(kernels::Reduce::kSum, chosen, axes), kept)};
}

Batched ReduceOp::batch(const Op& op, std::span<const Batched> operands, int64_t size) const {
  std::vector<int64_t> shifted;
  for (int64_t axis : axes) shifted.push_back(axis + 1);
  return on_slices_first(make_operation<ReduceOp>(fn, std::move(shifted)), operands[0], size);
}

// --- argmax ---

std::string ArgmaxOp::attributes() const { return fmt::format("axis={}", axis); }

ValueType ArgmaxOp::result_type(std::span<const ValueType> operands) const {
  check_operand_count("argmax", operands, 1);
  Shape out = operands[0].shape;
  out.erase(out.begin() + checked_axis("argmax", axis, out));
  return {DType::kInt32, out};
}

void ArgmaxOp::partition(Partitioner& p, int value, const Op& op) const {
  Layout in = p.layout(op.inputs[0]).settled();
  in.dims[static_cast<size_t>(axis)].clear();
  Layout out = in;
  out.dims.erase(out.dims.begin() + axis);
  p.compute(value, {p.slot_with(op.inputs[0], in)}, out);
}

Block ArgmaxOp::run(const KernelContext& device, const Step& step,
                    std::span<const Block> in) const {
  Block out = device.allocate(step.dtype, step.shape);
  device.backend.argmax(in[0].dtype(), in[0].bytes().data(), in[0].shape(), axis,
                        out.mutable_bytes().data());
  return out;
}

Batched ArgmaxOp::batch(const Op& /*op*/, std::span<const Batched> operands, int64_t size) const {
  return on_slices_first(make_operation<ArgmaxOp>(axis + 1), operands[0], size);
}

namespace {

const bool reduction_registered = [] {
  for (auto fn : {kernels::Reduce::kSum, kernels::Reduce::kMax, kernels::Reduce::kMin,
                  kernels::Reduce::kProd}) {
    register_operation("reduce_" + std::string(kernels::name(fn)), [fn](const AttributeReader& r) {
      return make_operation<ReduceOp>(fn, r.integers("axes"));
    });
  }
  register_operation("argmax", [](const AttributeReader& r) {
    return make_operation<ArgmaxOp>(static_cast<int>(r.integer("axis")));
  });
  return true;
}();

}  // namespace

// --- the family's builders (lax.h) ---

namespace lax {

Tensor reduce(kernels::Reduce fn, const Tensor& x, std::vector<int64_t> axes) {
  if (axes.empty()) return x;
  const Shape& shape = x.shape();
  const auto one = [&](int64_t a) {
    return a >= 0 && a < static_cast<int64_t>(shape.size()) && shape[static_cast<size_t>(a)] == 1;
  };
  if (!std::all_of(axes.begin(), axes.end(), one)) {
    return bind(make_operation<ReduceOp>(fn, std::move(axes)), {x});
  }
  // Only axes of one element: as XLA's simplifier, a reshape that drops them, so that no value
  // is combined with the initial one (jnp.sum over an axis of one keeps -0 and subnormals, and a
  // chain's exp feeding it stays the chain's own: XLA's, not its reductions' YNNPACK's). XLA
  // keeps such axes in a reduction that has others.
  Shape kept;
  for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d) {
    if (std::find(axes.begin(), axes.end(), d) == axes.end()) {
      kept.push_back(shape[static_cast<size_t>(d)]);
    }
  }
  return reshape(x, kept);
}

Tensor argmax(const Tensor& x, int axis) { return bind(make_operation<ArgmaxOp>(axis), {x}); }

}  // namespace lax
}  // namespace spmd::compiler
