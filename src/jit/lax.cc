// The primitives' builders (lax.h): each applies one operation of its family.
#include "jit/lax.h"

#include <utility>

#include "jit/ops/contraction.h"
#include "jit/ops/creation.h"
#include "jit/ops/elementwise.h"
#include "jit/ops/layout.h"
#include "jit/ops/ordering.h"
#include "jit/ops/parameter.h"
#include "jit/ops/reduction.h"
#include "jit/ops/select_convert.h"
#include "jit/sharding_in_types.h"
#include "jit/trace.h"

namespace spmd::compiler::lax {

namespace {

Tensor apply(std::shared_ptr<const Operation> operation, std::initializer_list<Tensor> operands) {
  return bind(std::move(operation), std::span<const Tensor>(operands.begin(), operands.size()));
}

}  // namespace

Tensor bind(std::shared_ptr<const Operation> operation, std::span<const Tensor> operands) {
  std::vector<int> values;
  values.reserve(operands.size());
  for (const Tensor& t : operands) values.push_back(t.value());
  return operands.front().trace()->apply(std::move(operation), std::move(values));
}

Tensor convert_element_type(const Tensor& x, DType dtype) {
  if (x.dtype() == dtype) return x;
  return apply(make_operation<ConvertOp>(dtype), {x});
}

Tensor unary(kernels::Unary fn, const Tensor& x) { return apply(make_operation<UnaryOp>(fn), {x}); }

Tensor binary(kernels::Binary fn, const Tensor& a, const Tensor& b) {
  return apply(make_operation<BinaryOp>(fn), {a, b});
}

Tensor select(const Tensor& which, const Tensor& a, const Tensor& b) {
  return apply(make_operation<SelectOp>(), {which, a, b});
}

Tensor reduce(kernels::Reduce fn, const Tensor& x, std::vector<int64_t> axes) {
  if (axes.empty()) return x;
  return apply(make_operation<ReduceOp>(fn, std::move(axes)), {x});
}

Tensor argmax(const Tensor& x, int axis) { return apply(make_operation<ArgmaxOp>(axis), {x}); }

Tensor cumsum(const Tensor& x, int axis) { return apply(make_operation<CumsumOp>(axis), {x}); }

Tensor reshape(const Tensor& x, const Shape& shape) {
  if (x.shape() == shape) return x;
  return apply(make_operation<ReshapeOp>(shape), {x});
}

Tensor broadcast(const Tensor& x, const Shape& shape) {
  if (x.shape() == shape) return x;
  return apply(make_operation<BroadcastOp>(shape), {x});
}

Tensor expand_dims(const Tensor& x, int axis) {
  Shape shape = x.shape();
  shape.insert(shape.begin() + axis, 1);
  return reshape(x, shape);
}

Tensor transpose(const Tensor& x, const std::vector<int64_t>& perm) {
  return apply(make_operation<TransposeOp>(perm), {x});
}

Tensor slice(const Tensor& x, const std::vector<int64_t>& start, const Shape& extent) {
  if (extent == x.shape()) return x;
  return apply(make_operation<SliceOp>(start, extent), {x});
}

Tensor concatenate(std::span<const Tensor> parts, int axis) {
  return bind(make_operation<ConcatenateOp>(axis), parts);
}

Tensor dot(const Tensor& a, const Tensor& b, const std::string& lhs, const std::string& rhs,
           const std::string& out, std::optional<PartitionSpec> out_sharding) {
  return apply(make_operation<DotOp>(lhs, rhs, out, std::move(out_sharding)), {a, b});
}

Tensor matmul(const Tensor& a, const Tensor& b, size_t batch,
              std::optional<PartitionSpec> out_sharding) {
  return apply(matmul_operation(batch, std::move(out_sharding)), {a, b});
}

Tensor full(const std::shared_ptr<Trace>& trace, ValueType type, double value) {
  return trace->apply(make_operation<FullOp>(value, std::move(type)), {});
}

Tensor full(const std::shared_ptr<Trace>& trace, const Shape& shape, DType dtype, double value) {
  return full(trace, ValueType{dtype, shape}, value);
}

Tensor full_like(const Tensor& x, double value) {
  const Op source = x.trace()->op(x.value());  // a copy: full() grows the program
  Tensor out = full(x.trace(), ValueType{x.dtype(), x.shape(), source.spec}, value);
  if (const auto* param = source.as<ParameterOp>()) {
    return constrained_auto(out, *param->sharding());
  }
  return out;
}

Tensor iota(const std::shared_ptr<Trace>& trace, ValueType type) {
  return trace->apply(make_operation<IotaOp>(std::move(type)), {});
}

Tensor constant(const std::shared_ptr<Trace>& trace, const HostArray& value) {
  return trace->apply(make_operation<ConstantOp>(std::make_shared<const HostArray>(value)), {});
}

Tensor top_k(const Tensor& x, int64_t k) { return apply(make_operation<TopKOp>(k), {x}); }

Tensor search_sorted(const Tensor& sorted, const Tensor& queries) {
  return apply(make_operation<SearchSortedOp>(), {sorted, queries});
}

Tensor take(const Tensor& x, const Tensor& indices, int axis) {
  return apply(make_operation<TakeOp>(axis), {x, indices});
}

}  // namespace spmd::compiler::lax
