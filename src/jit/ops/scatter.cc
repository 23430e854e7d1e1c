// "scatter": XLA's scatter along one axis with a combiner (set, add, mul, min, max), what
// x.at[indices].set/add/multiply/min/max is made of (spmd::numpy's update_at). Its derivatives
// are JAX's rules for scatter, scatter-add, scatter-mul and scatter-min/max, composed of take,
// scatter_add and element-wise operations, so they differentiate and batch in turn.
#include "kernels/scatter.h"

#include <fmt/format.h>

#include <algorithm>

#include "jit/batching.h"
#include "jit/lax.h"
#include "jit/op_registry.h"
#include "jit/operation.h"
#include "jit/partitioner.h"
#include "jit/program.h"
#include "spmd/error.h"

namespace spmd::compiler {

using kernels::Binary;
using kernels::ScatterCombine;

// Operands: the operand, int32 indices of one dimension (count), the updates (the operand's shape
// with shape[axis] replaced by count, its dtype). The result: the operand with each update slice
// combined at its index along `axis`, in order; an index outside the axis is dropped
// (kernels/scatter.h). `unique` is the caller's promise that no index repeats (JAX's
// unique_indices), which mul's derivative needs. Whole on every device.
class ScatterOp final : public Operation {
 public:
  ScatterOp(ScatterCombine how, int axis, bool unique) : how(how), axis(axis), unique(unique) {}
  const ScatterCombine how;
  const int axis;
  const bool unique;

  std::string name() const override { return "scatter"; }
  std::string attributes() const override;  // "combine=add axis=0 unique=false"
  ValueType result_type(std::span<const ValueType> operands) const override;
  void partition(Partitioner& p, int value, const Op& op) const override;
  Block run(const KernelContext& device, const Step& step,
            std::span<const Block> in) const override;
  Cotangents vjp(const Op& op, const Tensor& result, std::span<const Tensor> operands,
                 const Tensor& g) const override;
  // mul's with respect to updates at indices that may repeat is refused, as JAX refuses it; the
  // operand's is given all the same.
  Cotangents vjp_wanted(const Op& op, const Tensor& result, std::span<const Tensor> operands,
                        const Tensor& g, const std::vector<bool>& wanted) const override;
  // Shared indices keep one operation over the batch; batched ones one per slice.
  Batched batch(const Op& op, std::span<const Batched> operands, int64_t size) const override;
};

namespace {

ScatterCombine combine_named(const std::string& name) {
  for (const ScatterCombine how : {ScatterCombine::kSet, ScatterCombine::kAdd, ScatterCombine::kMul,
                                   ScatterCombine::kMin, ScatterCombine::kMax}) {
    if (name == kernels::scatter_combine_name(how)) return how;
  }
  throw InvalidArgument(fmt::format("scatter: no combiner named '{}'", name));
}

// The derivatives' pieces, for indices `i` into an axis of n elements and a value `like` shaped
// as the updates.
struct Placement {
  Tensor inside;   // bool, the updates' shape: the update's index lies in the axis
  Tensor clamped;  // int32 (count): the indices, those outside replaced by 0
  int axis;
  int64_t n;

  // x's slices at the indices (updates-shaped), zero where an update is dropped.
  Tensor take(const Tensor& x) const {
    const Tensor taken = lax::take(x, clamped, axis);
    return lax::select(inside, taken, lax::full_like(taken, 0.0));
  }
  // zeros of the operand's shape plus each of u's slices (zero where dropped) added at its index.
  Tensor add_back(const Tensor& u) const {
    return lax::scatter_add(lax::select(inside, u, lax::full_like(u, 0.0)), clamped, axis, n);
  }
};

Placement placement(const Tensor& indices, const Tensor& updates, int axis, int64_t n) {
  const Tensor zero = lax::full_like(indices, 0.0);
  const Tensor in_axis = lax::binary(
      Binary::kAnd, lax::binary(Binary::kGe, indices, zero),
      lax::binary(Binary::kLt, indices, lax::full_like(indices, static_cast<double>(n))));
  Shape along(updates.shape().size(), 1);
  along[static_cast<size_t>(axis)] = indices.shape()[0];
  const Tensor inside = lax::broadcast(lax::reshape(in_axis, along), updates.shape());
  return {inside, lax::select(in_axis, indices, zero), axis, n};
}

// JAX's _scatter_transpose_rule through the ids trick: each update's id (1, 2, …) set at its
// index finds the update that stays; the operand's cotangent is g where no update landed, and an
// update's is g at its index when it stayed.
Cotangents set_vjp(const Tensor& indices, const Placement& at, const Tensor& g, int64_t n) {
  const int64_t count = indices.shape()[0];
  const Tensor ids = lax::binary(Binary::kAdd, lax::iota(g.trace(), {DType::kInt32, {count}}),
                                 lax::full(g.trace(), Shape{count}, DType::kInt32, 1));
  const Tensor stayed = lax::bind(make_operation<ScatterOp>(ScatterCombine::kSet, 0, false),
                                  {lax::full(g.trace(), Shape{n}, DType::kInt32, 0), indices, ids});
  Shape along(g.shape().size(), 1);
  along[static_cast<size_t>(at.axis)] = n;
  const Tensor untouched = lax::broadcast(
      lax::reshape(lax::binary(Binary::kEq, stayed, lax::full_like(stayed, 0.0)), along),
      g.shape());
  along[static_cast<size_t>(at.axis)] = count;
  const Tensor won = lax::broadcast(
      lax::reshape(lax::binary(Binary::kEq, lax::take(stayed, at.clamped, 0), ids), along),
      at.inside.shape());
  const Tensor taken = at.take(g);
  return {lax::select(untouched, g, lax::full_like(g, 0.0)), std::nullopt,
          lax::select(won, taken, lax::full_like(taken, 0.0))};
}

// JAX's _scatter_extremal_jvp, transposed: an element's cotangent is shared equally among the
// updates equal to the result there and the operand's element when it equals it too.
Cotangents extremal_vjp(const Tensor& x, const Tensor& u, const Placement& at, const Tensor& result,
                        const Tensor& g) {
  const auto one = [](const Tensor& like) { return lax::full_like(like, 1.0); };
  const auto zero = [](const Tensor& like) { return lax::full_like(like, 0.0); };
  const auto div = [](const Tensor& a, const Tensor& b) { return lax::binary(Binary::kDiv, a, b); };
  const Tensor target = at.take(result);
  const Tensor successful =
      lax::binary(Binary::kAnd, at.inside, lax::binary(Binary::kEq, u, target));
  const Tensor retained = lax::binary(Binary::kEq, at.take(x), target);
  const Tensor num_updates = at.take(at.add_back(lax::select(successful, one(u), zero(u))));
  const Tensor num_refs = at.take(at.add_back(one(u)));
  const Tensor plus_one = lax::binary(Binary::kAdd, num_updates, one(u));
  const Tensor updates_coef = lax::select(
      successful, lax::select(retained, div(one(u), plus_one), div(one(u), num_updates)), zero(u));
  const Tensor operand_coef =
      div(lax::binary(Binary::kAdd, lax::full_like(u, -1.0),
                      lax::select(retained, div(one(u), plus_one), zero(u))),
          num_refs);
  const Tensor taken = at.take(g);
  return {lax::binary(Binary::kAdd, g, at.add_back(lax::binary(Binary::kMul, taken, operand_coef))),
          std::nullopt, lax::binary(Binary::kMul, taken, updates_coef)};
}

}  // namespace

std::string ScatterOp::attributes() const {
  return fmt::format("combine={} axis={} unique={}", kernels::scatter_combine_name(how), axis,
                     unique ? "true" : "false");
}

ValueType ScatterOp::result_type(std::span<const ValueType> operands) const {
  check_operand_count("scatter", operands, 3);
  const ValueType& x = operands[0];
  const ValueType& indices = operands[1];
  const ValueType& updates = operands[2];
  const auto rank = static_cast<int>(x.shape.size());
  Shape expected = x.shape;
  if (axis >= 0 && axis < rank && indices.shape.size() == 1) {
    expected[static_cast<size_t>(axis)] = indices.shape[0];
  }
  if (axis < 0 || axis >= rank || indices.dtype != DType::kInt32 || indices.shape.size() != 1 ||
      updates.dtype != x.dtype || updates.shape != expected) {
    throw InvalidArgument(fmt::format(
        "scatter: wants an operand, int32 indices of one dimension and updates of the operand's "
        "dtype and shape with axis {} as long as the indices, not {}, {} and {}",
        axis, type_text(x.dtype, x.shape), type_text(indices.dtype, indices.shape),
        type_text(updates.dtype, updates.shape)));
  }
  return x;
}

void ScatterOp::partition(Partitioner& p, int value, const Op& /*op*/) const {
  p.compute_whole(value);
}

Block ScatterOp::run(const KernelContext& device, const Step& step,
                     std::span<const Block> in) const {
  Block out = in[0];  // copied on the write below when the operand is shared
  device.backend.scatter(how, step.dtype, in[2].bytes().data(), step.shape, axis,
                         reinterpret_cast<const int32_t*>(in[1].bytes().data()), in[1].size(),
                         out.mutable_bytes().data());
  return out;
}

Cotangents ScatterOp::vjp(const Op& /*op*/, const Tensor& result, std::span<const Tensor> operands,
                          const Tensor& g) const {
  const Tensor& x = operands[0];
  const Tensor& indices = operands[1];
  const Tensor& u = operands[2];
  const int64_t n = x.shape()[static_cast<size_t>(axis)];
  const Placement at = placement(indices, u, axis, n);
  switch (how) {
    case ScatterCombine::kAdd:
      return {g, std::nullopt, at.take(g)};
    case ScatterCombine::kSet:
      return set_vjp(indices, at, g, n);
    case ScatterCombine::kMul:
      return {
          lax::bind(make_operation<ScatterOp>(ScatterCombine::kMul, axis, unique), {g, indices, u}),
          std::nullopt, at.take(lax::binary(Binary::kMul, g, x))};
    case ScatterCombine::kMin:
    case ScatterCombine::kMax:
      return extremal_vjp(x, u, at, result, g);
  }
  return {};
}

Cotangents ScatterOp::vjp_wanted(const Op& op, const Tensor& result,
                                 std::span<const Tensor> operands, const Tensor& g,
                                 const std::vector<bool>& wanted) const {
  if (how != ScatterCombine::kMul || unique) return vjp(op, result, operands, g);
  if (wanted[2]) {
    throw InvalidArgument(
        "grad of x.at[indices].multiply with respect to the values: scatter_mul gradients are "
        "only implemented if `unique_indices=True` (as JAX's); pass unique_indices=True when no "
        "index repeats");
  }
  Cotangents c = vjp(op, result, operands, g);
  c[2] = std::nullopt;
  return c;
}

Batched ScatterOp::batch(const Op& /*op*/, std::span<const Batched> operands, int64_t size) const {
  const Batched& indices = operands[1];
  if (!indices.dim) {
    return {lax::bind(make_operation<ScatterOp>(how, axis + 1, unique),
                      {batched_first(operands[0], size), indices.value,
                       batched_first(operands[2], size)}),
            0};
  }
  return {per_slice(size, operands,
                    [&](const std::vector<Tensor>& t) {
                      return lax::bind(make_operation<ScatterOp>(how, axis, unique), t);
                    }),
          0};
}

namespace {

const OperationRegistration registration("scatter", [](const AttributeReader& r) {
  return make_operation<ScatterOp>(combine_named(r.text("combine")),
                                   static_cast<int>(r.integer("axis")), r.boolean("unique", false));
});

}  // namespace

namespace lax {

Tensor scatter(kernels::ScatterCombine how, const Tensor& x, const Tensor& indices,
               const Tensor& updates, int axis, bool unique) {
  return bind(make_operation<ScatterOp>(how, axis, unique), {x, indices, updates});
}

}  // namespace lax
}  // namespace spmd::compiler
