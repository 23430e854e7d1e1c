// The ordering family: operations whose values depend on an order of additions or comparisons
// that JAX takes from XLA (kernels/ordering.h), and the gather that goes with them. What
// jax.random.choice with probabilities, or from an array, is made of (spmd::random), and
// spmd::numpy's cumsum, cumprod, searchsorted and take. None has a derivative yet.
#include <fmt/format.h>

#include "jit/batching.h"
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
  Block run(const KernelContext& device, const Step& step,
            std::span<const Block> in) const override;
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
// of range is clamped, as XLA's gather does), which replace that dimension (jnp.take). Whole on
// every device.
class TakeOp final : public Operation {
 public:
  explicit TakeOp(int axis) : axis(axis) {}
  const int axis;

  std::string name() const override { return "take"; }
  std::string attributes() const override;  // "axis=0"
  ValueType result_type(std::span<const ValueType> operands) const override;
  void partition(Partitioner& p, int value, const Op& op) const override;
  Block run(const KernelContext& device, const Step& step,
            std::span<const Block> in) const override;
  // Batched indices into one operand, or one set of indices into batched slices, as one take;
  // both batched, one take per slice.
  Batched batch(const Op& op, std::span<const Batched> operands, int64_t size) const override;
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

// Every operand whole on every device, and the result too.
void partition_whole(Partitioner& p, int value, const Op& op) {
  std::vector<int> slots;
  for (int in : op.inputs)
    slots.push_back(p.slot_with(in, Layout::replicated(p.op(in).shape.size())));
  p.compute(value, std::move(slots), Layout::replicated(op.shape.size()));
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
        "unsharded over the axis being reduced). Reshard it first (spmd::reshard)",
        name(), typed_text(operands[0]), axis));
  }
  return operands[0].spec;
}

void CumulativeOp::partition(Partitioner& p, int value, const Op& op) const {
  Layout in = p.layout(op.inputs[0]).settled();
  in.dims[static_cast<size_t>(axis)].clear();
  p.compute(value, {p.slot_with(op.inputs[0], in)}, in);
}

Block CumulativeOp::run(const KernelContext& device, const Step& step,
                        std::span<const Block> in) const {
  Block out = device.allocate(step.dtype, step.shape);
  const auto scan = product ? &kernels::Backend::cumprod : &kernels::Backend::cumsum;
  (device.backend.*scan)(step.dtype, in[0].bytes().data(), in[0].shape(), axis,
                         out.mutable_bytes().data());
  return out;
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
                    "(spmd::reshard)",
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
                               out.mutable_data<int32_t>().data());
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

void TopKOp::partition(Partitioner& p, int value, const Op& op) const {
  partition_whole(p, value, op);
}

Block TopKOp::run(const KernelContext& device, const Step& step, std::span<const Block> in) const {
  Block out = device.allocate(step.dtype, step.shape);
  device.backend.top_k(in[0].dtype(), in[0].bytes().data(), in[0].shape()[0], k,
                       out.mutable_data<int32_t>().data());
  return out;
}

Batched TopKOp::batch(const Op& /*op*/, std::span<const Batched> operands, int64_t size) const {
  return {per_slice(size, operands,
                    [&](const std::vector<Tensor>& x) {
                      return lax::bind(make_operation<TopKOp>(k), {x[0]});
                    }),
          0};
}

// TakeOp

std::string TakeOp::attributes() const { return fmt::format("axis={}", axis); }

ValueType TakeOp::result_type(std::span<const ValueType> operands) const {
  check_operand_count("take", operands, 2);
  check_axis("take", axis, operands[0]);
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

void TakeOp::partition(Partitioner& p, int value, const Op& op) const {
  partition_whole(p, value, op);
}

Batched TakeOp::batch(const Op& /*op*/, std::span<const Batched> operands, int64_t size) const {
  const Batched& x = operands[0];
  const Batched& indices = operands[1];
  if (!x.dim) {
    return {lax::bind(make_operation<TakeOp>(axis), {x.value, indices.value}), axis + *indices.dim};
  }
  if (!indices.dim) {
    return {lax::bind(make_operation<TakeOp>(axis + 1), {batched_first(x, size), indices.value}),
            0};
  }
  return {per_slice(size, operands,
                    [&](const std::vector<Tensor>& t) {
                      return lax::bind(make_operation<TakeOp>(axis), t);
                    }),
          0};
}

Block TakeOp::run(const KernelContext& device, const Step& step, std::span<const Block> in) const {
  Block out = device.allocate(step.dtype, step.shape);
  device.backend.take(dtype_size(step.dtype), in[0].bytes().data(), in[0].shape(), axis,
                      in[1].data<int32_t>().data(), in[1].size(), out.mutable_bytes().data());
  return out;
}

namespace {

const bool registered = [] {
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
  register_operation("take", [](const AttributeReader& r) {
    return make_operation<TakeOp>(static_cast<int>(r.integer("axis")));
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

Tensor top_k(const Tensor& x, int64_t k) { return bind(make_operation<TopKOp>(k), {x}); }

Tensor search_sorted(const Tensor& sorted, const Tensor& queries) {
  return bind(make_operation<SearchSortedOp>(), {sorted, queries});
}

Tensor take(const Tensor& x, const Tensor& indices, int axis) {
  return bind(make_operation<TakeOp>(axis), {x, indices});
}

}  // namespace lax
}  // namespace spmd::compiler
