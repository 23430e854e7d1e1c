// The ordering family: operations whose values depend on an order of additions or comparisons
// that JAX takes from XLA (kernels/ordering.h), and the gather that goes with them. What
// jax.random.choice with probabilities, or from an array, is made of (spmd::random), and
// spmd::numpy's cumsum, cumprod, searchsorted, take (with its transpose, scatter_add), sort and
// argsort. take, scatter_add and sort have derivatives.
#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "jit/batching.h"
#include "jit/factor_rule.h"
#include "jit/lax.h"
#include "jit/op_registry.h"
#include "jit/operation.h"
#include "jit/partitioner.h"
#include "jit/program.h"
#include "jit/sharding_in_types.h"
#include "spmd/error.h"

namespace spmd::compiler {

// "cumsum" and "cumprod": the running sum or product along `axis` (jnp.cumsum, jnp.cumprod), in
// XLA's order for floats. The axis is whole on every device; the other dimensions keep their
// split.
class CumulativeOp final : public Operation {
 public:
  CumulativeOp(bool product, int axis) : product(product), axis(axis) {}
  const bool product;
  const int axis;

  std::string name() const override { return product ? "cumprod" : "cumsum"; }
  std::string attributes() const override;  // "axis=0"
  ValueType result_type(std::span<const ValueType> operands) const override;
  // JAX's: the operand's, unless the axis is split over an Explicit axis (ShardingTypeError).
  PartitionSpec type_spec(std::span<const ValueType> operands, const ValueType& result,
                          const Mesh& mesh) const override;
  void partition(Partitioner& p, int value, const Op& op) const override;
  // Shardy's: every dimension one factor, the scanned one included (JAX's result keeps its
  // split; partition() gathers it and splits the result again).
  std::optional<FactorRule> factor_rule(std::span<const ValueType> operands,
                                        const ValueType& result) const override;
  Block run(const KernelContext& device, const Step& step,
            std::span<const Block> in) const override;
  // cumsum's transpose, as JAX's: the running sum from the end, g flipped, summed and flipped
  // back. cumprod has none here (JAX differentiates its associative scan): an InvalidArgument.
  Cotangents vjp(const Op& op, const Tensor& result, std::span<const Tensor> operands,
                 const Tensor& g) const override;
  Batched batch(const Op& op, std::span<const Batched> operands, int64_t size) const override;
};

// "searchsorted": for each element of the queries (operand 1), its int32 insertion index into
// the sorted rank-1 operand 0 (jnp.searchsorted, side 'left'). Operand 0 is whole on every
// device; the result is split as the queries are, so each device searches its own.
class SearchSortedOp final : public Operation {
 public:
  std::string name() const override { return "searchsorted"; }
  ValueType result_type(std::span<const ValueType> operands) const override;
  // The queries', where the sorted operand is not split over an Explicit axis.
  PartitionSpec type_spec(std::span<const ValueType> operands, const ValueType& result,
                          const Mesh& mesh) const override;
  void partition(Partitioner& p, int value, const Op& op) const override;
  // The queries are asked for the layout asked of the result (the draws of a choice are then
  // made split).
  std::optional<Layout> operand_hint(const Op& op, const Shape& operand,
                                     const Layout* result) const override;
  Block run(const KernelContext& device, const Step& step,
            std::span<const Block> in) const override;
  // Batched queries against one sorted operand.
  Batched batch(const Op& op, std::span<const Batched> operands, int64_t size) const override;
};

// "top_k": the int32 indices of the `k` largest elements of a rank-1 operand, largest first
// (lax.top_k's second result). Whole on every device.
class TopKOp final : public Operation {
 public:
  explicit TopKOp(int64_t k) : k(k) {}
  const int64_t k;

  std::string name() const override { return "top_k"; }
  std::string attributes() const override;  // "k=3"
  ValueType result_type(std::span<const ValueType> operands) const override;
  void partition(Partitioner& p, int value, const Op& op) const override;
  Block run(const KernelContext& device, const Step& step,
            std::span<const Block> in) const override;
  // One operation per slice: the kernel takes one rank-1 operand.
  Batched batch(const Op& op, std::span<const Batched> operands, int64_t size) const override;
};

// "take": operand 0's slices along `axis` at the int32 indices of operand 1 (any shape; one out
// of range is clamped, as XLA's gather does), which replace that dimension (jnp.take's clip
// mode). With `fill`, operand 2 is one element of operand 0's dtype, and an index out of range
// gives slices of it instead (jnp.take's default mode, in the gather's one pass). Whole on every
// device.
class TakeOp final : public Operation {
 public:
  explicit TakeOp(int axis, bool fill = false) : axis(axis), fill(fill) {}
  const int axis;
  const bool fill;

  std::string name() const override { return "take"; }
  std::string attributes() const override;  // "axis=0", "axis=0 fill=1"
  ValueType result_type(std::span<const ValueType> operands) const override;
  void partition(Partitioner& p, int value, const Op& op) const override;
  // The operand's: g added back at the indices (scatter_add), a filled slice's adding nothing;
  // none for the indices or the fill.
  Cotangents vjp(const Op& op, const Tensor& result, std::span<const Tensor> operands,
                 const Tensor& g) const override;
  // Shardy's gather: operand 0's other dimensions and the indices' dimensions pass through to
  // the result; the gathered one has no factor (JAX's result keeps the other splits).
  std::optional<FactorRule> factor_rule(std::span<const ValueType> operands,
                                        const ValueType& result) const override;
  Block run(const KernelContext& device, const Step& step,
            std::span<const Block> in) const override;
  // Batched indices into one operand, or one set of indices into batched slices, as one take;
  // both batched, one take per slice.
  Batched batch(const Op& op, std::span<const Batched> operands, int64_t size) const override;
};

// "sort" and "argsort": a stable sort of each line along `axis` by operand 0's keys in JAX's order
// (kernels/ordering.h). "sort" gives the keys sorted (lax.sort) or, with a second operand of the
// same shape, that operand's elements in the keys' order (lax.sort_key_val's values); "argsort"
// gives int32 positions along the axis. `descending` is jnp's: the reverse of the ascending
// order for sort, equal keys in their order for argsort. The axis is whole on every device; the
// other dimensions keep their split.
class SortOp final : public Operation {
 public:
  SortOp(int axis, bool descending, bool indices)
      : axis(axis), descending(descending), indices(indices) {}
  const int axis;
  const bool descending;
  const bool indices;

  std::string name() const override { return indices ? "argsort" : "sort"; }
  std::string attributes() const override;  // "axis=0,descending=1"
  ValueType result_type(std::span<const ValueType> operands) const override;
  // The operands' (which must agree), unless the axis is split over an Explicit axis.
  PartitionSpec type_spec(std::span<const ValueType> operands, const ValueType& result,
                          const Mesh& mesh) const override;
  void partition(Partitioner& p, int value, const Op& op) const override;
  // Shardy's: every dimension one factor through operands and result, the sorted one included
  // (the result keeps a split of it, which partition() gathers and splits again).
  std::optional<FactorRule> factor_rule(std::span<const ValueType> operands,
                                        const ValueType& result) const override;
  Block run(const KernelContext& device, const Step& step,
            std::span<const Block> in) const override;
  // The sorted values' cotangent goes back to where each came from: g sorted by the positions
  // the values were taken from. None reaches the keys of a sort with a payload.
  Cotangents vjp(const Op& op, const Tensor& result, std::span<const Tensor> operands,
                 const Tensor& g) const override;
  Batched batch(const Op& op, std::span<const Batched> operands, int64_t size) const override;
};

// "scatter_add": take's transpose. Operand 0 (floats) shaped as take's result, operand 1 take's
// int32 indices: the result, of operand 0's shape with the indices' dimensions replaced by one
// of `size`, is zeros plus each slice of operand 0 added at its index along `axis` (clamped, as
// take clamps), in order (kernels::scatter_add). Whole on every device.
class ScatterAddOp final : public Operation {
 public:
  ScatterAddOp(int axis, int64_t size) : axis(axis), size(size) {}
  const int axis;
  const int64_t size;

  std::string name() const override { return "scatter_add"; }
  std::string attributes() const override;  // "axis=0,size=5"
  ValueType result_type(std::span<const ValueType> operands) const override;
  void partition(Partitioner& p, int value, const Op& op) const override;
  Block run(const KernelContext& device, const Step& step,
            std::span<const Block> in) const override;
  // The updates': g taken at the indices.
  Cotangents vjp(const Op& op, const Tensor& result, std::span<const Tensor> operands,
                 const Tensor& g) const override;
  // As take's: shared indices keep one operation, batched ones one per slice.
  Batched batch(const Op& op, std::span<const Batched> operands, int64_t batch_size) const override;
};

namespace {

void check_orderable(std::string_view what, const ValueType& t) {
  if (!kernels::orderable(t.dtype)) {
    throw InvalidArgument(fmt::format("{}: takes 32- or 64-bit integers or floats, not {}", what,
                                      type_text(t.dtype, t.shape)));
  }
}

void check_axis(std::string_view what, int axis, const ValueType& t) {
  if (axis < 0 || axis >= static_cast<int>(t.shape.size())) {
    throw InvalidArgument(
        fmt::format("{}: axis {} of {}", what, axis, type_text(t.dtype, t.shape)));
  }
}

}  // namespace

// CumulativeOp

std::string CumulativeOp::attributes() const { return fmt::format("axis={}", axis); }

ValueType CumulativeOp::result_type(std::span<const ValueType> operands) const {
  const std::string what = name();
  check_operand_count(what, operands, 1);
  check_axis(what, axis, operands[0]);
  check_orderable(what, operands[0]);
  return {operands[0].dtype, operands[0].shape};
}

PartitionSpec CumulativeOp::type_spec(std::span<const ValueType> operands,
                                      const ValueType& /*result*/, const Mesh& /*mesh*/) const {
  if (!type_entries(operands[0])[static_cast<size_t>(axis)].is_none()) {
    throw ShardingTypeError(fmt::format(
        "{} of {} along axis {}: the axis being reduced must not be split (Input should be "
        "unsharded over the axis being reduced). Reshard it first (reshard: jax.sharding.reshard)",
        name(), typed_text(operands[0]), axis));
  }
  return operands[0].spec;
}

void CumulativeOp::partition(Partitioner& p, int value, const Op& op) const {
  Layout in = p.layout(op.inputs[0]).settled();
  in.dims[static_cast<size_t>(axis)].clear();
  p.compute(value, {p.slot_with(op.inputs[0], in)}, in);
}

std::optional<FactorRule> CumulativeOp::factor_rule(std::span<const ValueType> operands,
                                                    const ValueType& result) const {
  return FactorRule::pointwise(operands, result);
}

Block CumulativeOp::run(const KernelContext& device, const Step& step,
                        std::span<const Block> in) const {
  Block out = device.allocate(step.dtype, step.shape);
  const auto scan = product ? &kernels::Backend::cumprod : &kernels::Backend::cumsum;
  (device.backend.*scan)(step.dtype, in[0].bytes().data(), in[0].shape(), axis,
                         out.mutable_bytes().data());
  return out;
}

namespace {

constexpr int64_t kScanBase = 16;  // XLA's ReduceWindowRewriter base length on CPU

// `x`'s elements [from, from + count) along `axis`, then `zeros` zeros.
Tensor shifted(const Tensor& x, int axis, int64_t from, int64_t count, int64_t zeros) {
  std::vector<int64_t> start(x.shape().size(), 0);
  Shape extent = x.shape();
  start[static_cast<size_t>(axis)] = from;
  extent[static_cast<size_t>(axis)] = count;
  std::vector<Tensor> parts = {lax::slice(x, start, extent)};
  if (zeros > 0) {
    extent[static_cast<size_t>(axis)] = zeros;
    parts.push_back(lax::full(x.trace(), extent, x.dtype(), 0));
  }
  return lax::concatenate(parts, axis);
}

// The running sum from the end along `axis`, in the order XLA's CPU backend computes JAX's
// reverse cumsum (a reduce-window padded at the end): a line of at most 16 elements as each
// element's window summed from it onwards, ((0 + x_i) + x_i+1) + …; a longer one zero-padded to
// rows of 16, each row so, plus the sum from the end of the later rows' totals (the same scan,
// one row up), added last.
Tensor reverse_running_sum(const Tensor& x, int axis) {  // NOLINT(misc-no-recursion)
  const Shape shape = x.shape();
  const int64_t n = shape[static_cast<size_t>(axis)];
  if (n <= kScanBase) {
    Tensor acc = lax::full_like(x, 0);
    for (int64_t d = 0; d < n; ++d) acc = acc + shifted(x, axis, d, n - d, d);
    return acc;
  }
  const int64_t rows = (n + kScanBase - 1) / kScanBase;
  Shape tiled = shape;
  tiled[static_cast<size_t>(axis)] = rows;
  tiled.insert(tiled.begin() + axis + 1, kScanBase);
  const Tensor padded = shifted(x, axis, 0, n, rows * kScanBase - n);
  const Tensor within = reverse_running_sum(lax::reshape(padded, tiled), axis + 1);
  Shape totals_shape = tiled;
  totals_shape.erase(totals_shape.begin() + axis + 1);
  const Tensor totals = lax::reshape(shifted(within, axis + 1, 0, 1, 0), totals_shape);
  // The later rows' totals: the inclusive scan of the totals, one row on.
  const Tensor later = shifted(reverse_running_sum(totals, axis), axis, 1, rows - 1, 1);
  const Tensor sum = within + lax::broadcast(lax::expand_dims(later, axis + 1), tiled);
  Shape flat = shape;
  flat[static_cast<size_t>(axis)] = rows * kScanBase;
  return shifted(lax::reshape(sum, flat), axis, 0, n, 0);
}

}  // namespace

Cotangents CumulativeOp::vjp(const Op& op, const Tensor& result, std::span<const Tensor> operands,
                             const Tensor& g) const {
  if (product) return Operation::vjp(op, result, operands, g);
  return {reverse_running_sum(g, axis)};
}

Batched CumulativeOp::batch(const Op& /*op*/, std::span<const Batched> operands,
                            int64_t size) const {
  return on_slices_first(make_operation<CumulativeOp>(product, axis + 1), operands[0], size);
}

// SearchSortedOp

ValueType SearchSortedOp::result_type(std::span<const ValueType> operands) const {
  check_operand_count("searchsorted", operands, 2);
  check_orderable("searchsorted", operands[0]);
  if (operands[0].shape.size() != 1 || operands[0].shape[0] == 0 ||
      operands[0].dtype != operands[1].dtype) {
    throw InvalidArgument(fmt::format(
        "searchsorted: wants a non-empty rank-1 sorted array and queries of its dtype, not {} "
        "and {}",
        type_text(operands[0].dtype, operands[0].shape),
        type_text(operands[1].dtype, operands[1].shape)));
  }
  return {DType::kInt32, operands[1].shape};
}

PartitionSpec SearchSortedOp::type_spec(std::span<const ValueType> operands,
                                        const ValueType& /*result*/, const Mesh& /*mesh*/) const {
  if (!operands[0].spec.entries().empty()) {
    throw ShardingTypeError(
        fmt::format("searchsorted: the sorted array {} must not be split. Reshard it to P() first "
                    "(reshard: jax.sharding.reshard)",
                    typed_text(operands[0])));
  }
  return operands[1].spec;
}

void SearchSortedOp::partition(Partitioner& p, int value, const Op& op) const {
  const Layout queries = p.layout(op.inputs[1]).settled();
  p.compute(value,
            {p.slot_with(op.inputs[0], Layout::replicated(1)), p.slot_with(op.inputs[1], queries)},
            queries);
}

std::optional<Layout> SearchSortedOp::operand_hint(const Op& op, const Shape& operand,
                                                   const Layout* result) const {
  if (result == nullptr || operand != op.shape) return std::nullopt;
  return result->settled();
}

Block SearchSortedOp::run(const KernelContext& device, const Step& step,
                          std::span<const Block> in) const {
  Block out = device.allocate(step.dtype, step.shape);
  device.backend.search_sorted(in[0].dtype(), in[0].bytes().data(), in[0].shape()[0],
                               in[1].bytes().data(), in[1].size(),
                               reinterpret_cast<int32_t*>(out.mutable_bytes().data()));
  return out;
}

Batched SearchSortedOp::batch(const Op& /*op*/, std::span<const Batched> operands,
                              int64_t /*size*/) const {
  if (operands[0].dim) {
    throw InvalidArgument(
        "vmap: searchsorted over a batch of sorted arrays has no batching rule yet (map over the "
        "queries only)");
  }
  return {lax::bind(make_operation<SearchSortedOp>(), {operands[0].value, operands[1].value}),
          operands[1].dim};
}

// TopKOp

std::string TopKOp::attributes() const { return fmt::format("k={}", k); }

ValueType TopKOp::result_type(std::span<const ValueType> operands) const {
  check_operand_count("top_k", operands, 1);
  check_orderable("top_k", operands[0]);
  if (operands[0].shape.size() != 1 || k < 0 || k > operands[0].shape[0]) {
    throw InvalidArgument(fmt::format("top_k: k={} of {}: wants a rank-1 operand of k or more", k,
                                      type_text(operands[0].dtype, operands[0].shape)));
  }
  return {DType::kInt32, {k}};
}

void TopKOp::partition(Partitioner& p, int value, const Op& /*op*/) const {
  p.compute_whole(value);
}

Block TopKOp::run(const KernelContext& device, const Step& step, std::span<const Block> in) const {
  Block out = device.allocate(step.dtype, step.shape);
  device.backend.top_k(in[0].dtype(), in[0].bytes().data(), in[0].shape()[0], k,
                       reinterpret_cast<int32_t*>(out.mutable_bytes().data()));
  return out;
}

Batched TopKOp::batch(const Op& /*op*/, std::span<const Batched> operands, int64_t size) const {
  return {per_slice(size, operands,
                    [&](const std::vector<Tensor>& x) {
                      return lax::bind(make_operation<TopKOp>(k), {x[0]});
                    }),
          0};
}

// ScatterAddOp

std::string ScatterAddOp::attributes() const { return fmt::format("axis={} size={}", axis, size); }

ValueType ScatterAddOp::result_type(std::span<const ValueType> operands) const {
  check_operand_count("scatter_add", operands, 2);
  const ValueType& updates = operands[0];
  const ValueType& indices = operands[1];
  const auto k = static_cast<int>(indices.shape.size());
  const auto rank = static_cast<int>(updates.shape.size());
  if (!is_floating(updates.dtype) || indices.dtype != DType::kInt32 || axis < 0 ||
      axis + k > rank || size <= 0 ||
      !std::equal(indices.shape.begin(), indices.shape.end(), updates.shape.begin() + axis)) {
    throw InvalidArgument(fmt::format(
        "scatter_add: wants float updates holding int32 indices' shape at axis {} and a "
        "positive size, not {} and {} (size {})",
        axis, type_text(updates.dtype, updates.shape), type_text(indices.dtype, indices.shape),
        size));
  }
  Shape out(updates.shape.begin(), updates.shape.begin() + axis);
  out.push_back(size);
  out.insert(out.end(), updates.shape.begin() + axis + k, updates.shape.end());
  return {updates.dtype, out};
}

void ScatterAddOp::partition(Partitioner& p, int value, const Op& /*op*/) const {
  p.compute_whole(value);
}

Block ScatterAddOp::run(const KernelContext& device, const Step& step,
                        std::span<const Block> in) const {
  Block out = device.allocate(step.dtype, step.shape);
  device.backend.scatter_add(step.dtype, in[0].bytes().data(), step.shape, axis,
                             reinterpret_cast<const int32_t*>(in[1].bytes().data()), in[1].size(),
                             out.mutable_bytes().data());
  return out;
}

Cotangents ScatterAddOp::vjp(const Op& /*op*/, const Tensor& /*result*/,
                             std::span<const Tensor> operands, const Tensor& g) const {
  return {lax::bind(make_operation<TakeOp>(axis), {g, operands[1]}), std::nullopt};
}

Batched ScatterAddOp::batch(const Op& /*op*/, std::span<const Batched> operands,
                            int64_t batch_size) const {
  const Batched& updates = operands[0];
  const Batched& indices = operands[1];
  if (!indices.dim) {
    return {lax::bind(make_operation<ScatterAddOp>(axis + 1, size),
                      {batched_first(updates, batch_size), indices.value}),
            0};
  }
  return {per_slice(batch_size, operands,
                    [&](const std::vector<Tensor>& t) {
                      return lax::bind(make_operation<ScatterAddOp>(axis, size), t);
                    }),
          0};
}

// SortOp

std::string SortOp::attributes() const {
  return fmt::format("axis={} descending={}", axis, descending ? 1 : 0);
}

ValueType SortOp::result_type(std::span<const ValueType> operands) const {
  const std::string what = name();
  if (operands.empty() || operands.size() > (indices ? 1U : 2U)) {
    check_operand_count(what, operands, 1);
  }
  check_axis(what, axis, operands[0]);
  check_orderable(what, operands[0]);
  const Shape& shape = operands[0].shape;
  if (shape[static_cast<size_t>(axis)] > std::numeric_limits<int32_t>::max()) {
    throw InvalidArgument(fmt::format("{}: an axis of {} elements; it sorts fewer than 2^31", what,
                                      shape[static_cast<size_t>(axis)]));
  }
  if (operands.size() == 2 && operands[1].shape != shape) {
    throw InvalidArgument(fmt::format("{}: keys {} and values {} differ in shape", what,
                                      type_text(operands[0].dtype, shape),
                                      type_text(operands[1].dtype, operands[1].shape)));
  }
  return {indices ? DType::kInt32 : operands.back().dtype, shape};
}

PartitionSpec SortOp::type_spec(std::span<const ValueType> operands, const ValueType& /*result*/,
                                const Mesh& /*mesh*/) const {
  if (operands.size() == 2 && !(operands[0].spec == operands[1].spec)) {
    throw ShardingTypeError(
        fmt::format("{}: keys {} and values {} are split differently. Reshard "
                    "one like the other first (reshard: jax.sharding.reshard)",
                    name(), typed_text(operands[0]), typed_text(operands[1])));
  }
  if (!type_entries(operands[0])[static_cast<size_t>(axis)].is_none()) {
    throw ShardingTypeError(fmt::format(
        "{} of {} along axis {}: the axis being sorted must not be split. Reshard it first "
        "(reshard: jax.sharding.reshard)",
        name(), typed_text(operands[0]), axis));
  }
  return operands[0].spec;
}

void SortOp::partition(Partitioner& p, int value, const Op& op) const {
  Layout in = p.layout(op.inputs[0]).settled();
  in.dims[static_cast<size_t>(axis)].clear();
  std::vector<int> slots;
  for (int operand : op.inputs) slots.push_back(p.slot_with(operand, in));
  p.compute(value, std::move(slots), in);
}

std::optional<FactorRule> SortOp::factor_rule(std::span<const ValueType> operands,
                                              const ValueType& result) const {
  return FactorRule::pointwise(operands, result);
}

Block SortOp::run(const KernelContext& device, const Step& step, std::span<const Block> in) const {
  Block out = device.allocate(step.dtype, step.shape);
  const kernels::SortSpec spec{in[0].shape(), axis, descending,
                               indices ? 0 : dtype_size(in.back().dtype())};
  device.backend.sort(in[0].dtype(), in[0].bytes().data(), spec,
                      indices ? nullptr : in.back().bytes().data(), out.mutable_bytes().data());
  return out;
}

Cotangents SortOp::vjp(const Op& op, const Tensor& result, std::span<const Tensor> operands,
                       const Tensor& g) const {
  if (indices) return Operation::vjp(op, result, operands, g);
  // Where each sorted value came from: the positions sorted as the values were.
  const Shape& shape = operands[0].shape();
  Shape line(shape.size(), 1);
  line[static_cast<size_t>(axis)] = shape[static_cast<size_t>(axis)];
  const Tensor positions = lax::broadcast(
      lax::reshape(lax::iota(g.trace(), {DType::kInt32, {line[static_cast<size_t>(axis)]}}), line),
      shape);
  const Tensor from =
      lax::bind(make_operation<SortOp>(axis, descending, false), {operands[0], positions});
  const Tensor back = lax::bind(make_operation<SortOp>(axis, false, false), {from, g});
  if (operands.size() == 1) return {back};
  return {std::nullopt, back};
}

Batched SortOp::batch(const Op& /*op*/, std::span<const Batched> operands, int64_t size) const {
  const auto shifted = make_operation<SortOp>(axis + 1, descending, indices);
  if (operands.size() == 1) return on_slices_first(shifted, operands[0], size);
  return {lax::bind(shifted, {batched_first(operands[0], size), batched_first(operands[1], size)}),
          0};
}

// TakeOp

std::string TakeOp::attributes() const {
  return fill ? fmt::format("axis={} fill=1", axis) : fmt::format("axis={}", axis);
}

ValueType TakeOp::result_type(std::span<const ValueType> operands) const {
  check_operand_count("take", operands, fill ? 3 : 2);
  check_axis("take", axis, operands[0]);
  if (fill && (operands[2].dtype != operands[0].dtype || !operands[2].shape.empty())) {
    throw InvalidArgument(fmt::format("take: the fill must be one element of {}, not {}",
                                      dtype_name(operands[0].dtype),
                                      type_text(operands[2].dtype, operands[2].shape)));
  }
  if (operands[1].dtype != DType::kInt32) {
    throw InvalidArgument(fmt::format("take: indices must be int32, not {}",
                                      type_text(operands[1].dtype, operands[1].shape)));
  }
  const Shape& in = operands[0].shape;
  if (in[static_cast<size_t>(axis)] == 0 && shape_size(operands[1].shape) > 0) {
    throw InvalidArgument(fmt::format("take: indices into an empty axis {} of {}", axis,
                                      type_text(operands[0].dtype, in)));
  }
  Shape out(in.begin(), in.begin() + axis);
  out.insert(out.end(), operands[1].shape.begin(), operands[1].shape.end());
  out.insert(out.end(), in.begin() + axis + 1, in.end());
  return {operands[0].dtype, out};
}

void TakeOp::partition(Partitioner& p, int value, const Op& /*op*/) const {
  p.compute_whole(value);
}

Batched TakeOp::batch(const Op& /*op*/, std::span<const Batched> operands, int64_t size) const {
  const Batched& x = operands[0];
  const Batched& indices = operands[1];
  const bool fill_batched = fill && operands[2].dim;
  // The operands after x and the indices (the fill), unbatched.
  const auto with = [&](Tensor a, Tensor i) {
    std::vector<Tensor> t = {std::move(a), std::move(i)};
    if (fill) t.push_back(operands[2].value);
    return t;
  };
  if (!x.dim && !fill_batched) {
    return {lax::bind(make_operation<TakeOp>(axis, fill), with(x.value, indices.value)),
            axis + *indices.dim};
  }
  if (!indices.dim && !fill_batched) {
    return {lax::bind(make_operation<TakeOp>(axis + 1, fill),
                      with(batched_first(x, size), indices.value)),
            0};
  }
  return {per_slice(size, operands,
                    [&](const std::vector<Tensor>& t) {
                      return lax::bind(make_operation<TakeOp>(axis, fill), t);
                    }),
          0};
}

std::optional<FactorRule> TakeOp::factor_rule(std::span<const ValueType> operands,
                                              const ValueType& result) const {
  FactorRule rule;
  rule.operands.resize(operands.size());  // the fill (a scalar) has no dimensions
  for (size_t d = 0; d < result.shape.size(); ++d) {
    rule.result.push_back(rule.add(result.shape[d]));
  }
  const auto rank = static_cast<int>(operands[0].shape.size());
  const auto k = static_cast<int>(operands[1].shape.size());
  for (int d = 0; d < rank; ++d) {
    rule.operands[0].push_back(d < axis ? d : d == axis ? -1 : d + k - 1);
  }
  for (int d = 0; d < k; ++d) rule.operands[1].push_back(axis + d);
  return rule;
}

Cotangents TakeOp::vjp(const Op& /*op*/, const Tensor& /*result*/, std::span<const Tensor> operands,
                       const Tensor& g) const {
  const int64_t n = operands[0].shape()[static_cast<size_t>(axis)];
  if (!fill) {
    return {lax::bind(make_operation<ScatterAddOp>(axis, n), {g, operands[1]}), std::nullopt};
  }
  // A filled slice's cotangent goes nowhere: zeros where the index is out of range, which the
  // clamping scatter then adds (as the select jnp.take made before sent back zeros there).
  const Tensor& i = operands[1];
  const Shape& where = i.shape();
  const Tensor inside = lax::binary(
      kernels::Binary::kAnd,
      lax::binary(kernels::Binary::kGe, i, lax::full(i.trace(), where, DType::kInt32, 0)),
      lax::binary(kernels::Binary::kLt, i,
                  lax::full(i.trace(), where, DType::kInt32, static_cast<double>(n))));
  Shape placed(static_cast<size_t>(axis), 1);  // the indices' dimensions where g has them
  placed.insert(placed.end(), where.begin(), where.end());
  placed.resize(g.shape().size(), 1);
  const Tensor kept =
      lax::select(lax::broadcast(lax::reshape(inside, placed), g.shape()), g, lax::full_like(g, 0));
  return {lax::bind(make_operation<ScatterAddOp>(axis, n), {kept, i}), std::nullopt, std::nullopt};
}

Block TakeOp::run(const KernelContext& device, const Step& step, std::span<const Block> in) const {
  Block out = device.allocate(step.dtype, step.shape);
  device.backend.take(dtype_size(step.dtype), in[0].bytes().data(), in[0].shape(), axis,
                      reinterpret_cast<const int32_t*>(in[1].bytes().data()), in[1].size(),
                      out.mutable_bytes().data(), fill ? in[2].bytes().data() : nullptr);
  return out;
}

namespace {

const bool ordering_registered = [] {
  register_operation("cumsum", [](const AttributeReader& r) {
    return make_operation<CumulativeOp>(false, static_cast<int>(r.integer("axis")));
  });
  register_operation("cumprod", [](const AttributeReader& r) {
    return make_operation<CumulativeOp>(true, static_cast<int>(r.integer("axis")));
  });
  register_operation("searchsorted",
                     [](const AttributeReader&) { return make_operation<SearchSortedOp>(); });
  register_operation(
      "top_k", [](const AttributeReader& r) { return make_operation<TopKOp>(r.integer("k")); });
  for (const bool indices : {false, true}) {
    register_operation(indices ? "argsort" : "sort", [indices](const AttributeReader& r) {
      return make_operation<SortOp>(static_cast<int>(r.integer("axis")),
                                    r.integer("descending") != 0, indices);
    });
  }
  register_operation("scatter_add", [](const AttributeReader& r) {
    return make_operation<ScatterAddOp>(static_cast<int>(r.integer("axis")), r.integer("size"));
  });
  register_operation("take", [](const AttributeReader& r) {
    return make_operation<TakeOp>(static_cast<int>(r.integer("axis")),
                                  r.has("fill") && r.integer("fill") != 0);
  });
  return true;
}();

}  // namespace

// --- the family's builders (lax.h) ---

namespace lax {

Tensor cumsum(const Tensor& x, int axis) {
  return bind(make_operation<CumulativeOp>(false, axis), {x});
}
Tensor cumprod(const Tensor& x, int axis) {
  return bind(make_operation<CumulativeOp>(true, axis), {x});
}
Tensor reverse_cumsum(const Tensor& x, int axis) { return reverse_running_sum(x, axis); }

Tensor scatter_add(const Tensor& updates, const Tensor& indices, int axis, int64_t size) {
  return bind(make_operation<ScatterAddOp>(axis, size), {updates, indices});
}

Tensor top_k(const Tensor& x, int64_t k) { return bind(make_operation<TopKOp>(k), {x}); }

Tensor search_sorted(const Tensor& sorted, const Tensor& queries) {
  return bind(make_operation<SearchSortedOp>(), {sorted, queries});
}

Tensor take(const Tensor& x, const Tensor& indices, int axis) {
  return bind(make_operation<TakeOp>(axis), {x, indices});
}

Tensor take_filled(const Tensor& x, const Tensor& indices, int axis, const Tensor& fill) {
  return bind(make_operation<TakeOp>(axis, true), {x, indices, fill});
}

Tensor sort(const Tensor& x, int axis, bool descending) {
  return bind(make_operation<SortOp>(axis, descending, false), {x});
}
Tensor sort_key_val(const Tensor& keys, const Tensor& values, int axis, bool descending) {
  return bind(make_operation<SortOp>(axis, descending, false), {keys, values});
}
Tensor argsort(const Tensor& x, int axis, bool descending) {
  return bind(make_operation<SortOp>(axis, descending, true), {x});
}

}  // namespace lax
}  // namespace spmd::compiler
