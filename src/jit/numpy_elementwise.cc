// spmd::numpy's element-wise operations, comparisons, where and astype: broadcasting and
// promotion, then one operation of the element-wise or select/convert family.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "jit/numpy_internal.h"
#include "jit/ops/creation.h"
#include "jit/ops/elementwise.h"
#include "jit/ops/layout.h"
#include "jit/ops/select_convert.h"
#include "jit/promotion.h"
#include "jit/trace.h"
#include "spmd/error.h"
#include "spmd/numpy.h"

namespace spmd::compiler {

using kernels::Binary;
using kernels::Unary;

Shape broadcast_shapes(std::string_view what, const Shape& a, const Shape& b) {
  Shape out(std::max(a.size(), b.size()));
  for (size_t i = 0; i < out.size(); ++i) {
    const int64_t da = i < a.size() ? a[a.size() - 1 - i] : 1;
    const int64_t db = i < b.size() ? b[b.size() - 1 - i] : 1;
    if (da != db && da != 1 && db != 1) {
      throw InvalidArgument(fmt::format("{}: shapes ({}) and ({}) do not broadcast", what,
                                        fmt::join(a, ", "), fmt::join(b, ", ")));
    }
    out[out.size() - 1 - i] = da == 1 ? db : da;
  }
  return out;
}

Tensor convert_to(const Tensor& t, DType dtype) {
  if (t.dtype() == dtype) return t;
  return t.trace()->apply(make_operation<ConvertOp>(dtype), {t.value()});
}

// `t` broadcast to `shape`; a rank-0 value stays as it is (kernels take one element for all).
Tensor broadcast_for_elementwise(const Tensor& t, const Shape& shape) {
  if (t.shape() == shape || t.shape().empty()) return t;
  return t.trace()->apply(make_operation<BroadcastOp>(shape), {t.value()});
}

Tensor scalar_tensor(const std::shared_ptr<Trace>& trace, const Scalar& s, DType dtype) {
  return trace->apply(make_operation<FullOp>(s.value, ValueType{dtype, {}}), {});
}

Tensor unary(std::string_view what, Unary code, const Tensor& a, DType dtype) {
  auto trace = trace_of(what, {&a});
  const Tensor x = convert_to(a, dtype);
  return trace->apply(make_operation<UnaryOp>(code), {x.value()});
}

// a `code` b with operands broadcast and converted to `operand_dtype`.
Tensor binary(std::string_view what, Binary code, const Tensor& a, const Tensor& b,
              DType operand_dtype) {
  auto trace = trace_of(what, {&a, &b});
  const Shape shape = broadcast_shapes(what, a.shape(), b.shape());
  const Tensor x = broadcast_for_elementwise(convert_to(a, operand_dtype), shape);
  const Tensor y = broadcast_for_elementwise(convert_to(b, operand_dtype), shape);
  return trace->apply(make_operation<BinaryOp>(code), {x.value(), y.value()});
}

Tensor arithmetic(std::string_view what, Binary code, const Tensor& a, const Tensor& b) {
  return binary(what, code, a, b, promote(a.dtype(), b.dtype()));
}

Tensor arithmetic(std::string_view what, Binary code, const Tensor& a, const Scalar& s,
                  bool scalar_first) {
  auto trace = trace_of(what, {&a});
  const DType dtype = promote_with_scalar(a.dtype(), s);
  const Tensor c = scalar_tensor(trace, s, dtype);
  return scalar_first ? binary(what, code, c, a, dtype) : binary(what, code, a, c, dtype);
}

void refuse_bool(std::string_view what, const Tensor& a) {
  if (a.dtype() == DType::kBool) {
    throw InvalidArgument(
        fmt::format("{}: not defined on bool ({})", what, type_text(a.dtype(), a.shape())));
  }
}

}  // namespace spmd::compiler

namespace spmd::numpy {

using compiler::arithmetic;
using compiler::floating_of;
using compiler::promote;
using kernels::Binary;
using kernels::Unary;

DType promote_types(DType a, DType b) { return promote(a, b); }

Tensor add(const Tensor& a, const Tensor& b) { return arithmetic("add", Binary::kAdd, a, b); }
Tensor subtract(const Tensor& a, const Tensor& b) {
  compiler::refuse_bool("subtract", a);
  return arithmetic("subtract", Binary::kSub, a, b);
}
Tensor multiply(const Tensor& a, const Tensor& b) {
  return arithmetic("multiply", Binary::kMul, a, b);
}
Tensor divide(const Tensor& a, const Tensor& b) {
  const DType t = floating_of(promote(a.dtype(), b.dtype()));
  return compiler::binary("divide", Binary::kDiv, a, b, t);
}
Tensor power(const Tensor& a, const Tensor& b) {
  compiler::refuse_bool("power", a);
  return arithmetic("power", Binary::kPow, a, b);
}
Tensor power(const Tensor& a, Scalar b) {
  compiler::refuse_bool("power", a);
  return arithmetic("power", Binary::kPow, a, b, false);
}
Tensor maximum(const Tensor& a, const Tensor& b) {
  return arithmetic("maximum", Binary::kMax, a, b);
}
Tensor minimum(const Tensor& a, const Tensor& b) {
  return arithmetic("minimum", Binary::kMin, a, b);
}
Tensor maximum(const Tensor& a, Scalar b) {
  return arithmetic("maximum", Binary::kMax, a, b, false);
}
Tensor minimum(const Tensor& a, Scalar b) {
  return arithmetic("minimum", Binary::kMin, a, b, false);
}

Tensor negative(const Tensor& a) {
  compiler::refuse_bool("negative", a);
  return compiler::unary("negative", Unary::kNeg, a, a.dtype());
}
Tensor exp(const Tensor& a) {
  return compiler::unary("exp", Unary::kExp, a, floating_of(a.dtype()));
}
Tensor log(const Tensor& a) {
  return compiler::unary("log", Unary::kLog, a, floating_of(a.dtype()));
}
Tensor tanh(const Tensor& a) {
  return compiler::unary("tanh", Unary::kTanh, a, floating_of(a.dtype()));
}
Tensor sqrt(const Tensor& a) {
  return compiler::unary("sqrt", Unary::kSqrt, a, floating_of(a.dtype()));
}
Tensor rsqrt(const Tensor& a) {
  return compiler::unary("rsqrt", Unary::kRsqrt, a, floating_of(a.dtype()));
}
Tensor abs(const Tensor& a) { return compiler::unary("abs", Unary::kAbs, a, a.dtype()); }
Tensor sign(const Tensor& a) {
  compiler::refuse_bool("sign", a);
  return compiler::unary("sign", Unary::kSign, a, a.dtype());
}
Tensor relu(const Tensor& a) {
  compiler::refuse_bool("relu", a);
  return maximum(a, Scalar(0));
}

Tensor equal(const Tensor& a, const Tensor& b) { return arithmetic("equal", Binary::kEq, a, b); }
Tensor not_equal(const Tensor& a, const Tensor& b) {
  return arithmetic("not_equal", Binary::kNe, a, b);
}
Tensor less(const Tensor& a, const Tensor& b) { return arithmetic("less", Binary::kLt, a, b); }
Tensor less_equal(const Tensor& a, const Tensor& b) {
  return arithmetic("less_equal", Binary::kLe, a, b);
}
Tensor greater(const Tensor& a, const Tensor& b) {
  return arithmetic("greater", Binary::kGt, a, b);
}
Tensor greater_equal(const Tensor& a, const Tensor& b) {
  return arithmetic("greater_equal", Binary::kGe, a, b);
}

Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  auto trace = compiler::trace_of("where", {&cond, &a, &b});
  const DType dtype = promote(a.dtype(), b.dtype());
  const Shape shape = compiler::broadcast_shapes(
      "where", cond.shape(), compiler::broadcast_shapes("where", a.shape(), b.shape()));
  const Tensor c =
      compiler::broadcast_for_elementwise(compiler::convert_to(cond, DType::kBool), shape);
  const Tensor x = compiler::broadcast_for_elementwise(compiler::convert_to(a, dtype), shape);
  const Tensor y = compiler::broadcast_for_elementwise(compiler::convert_to(b, dtype), shape);
  return trace->apply(compiler::make_operation<compiler::SelectOp>(),
                      {c.value(), x.value(), y.value()});
}

Tensor where(const Tensor& cond, const Tensor& a, Scalar b) {
  auto trace = compiler::trace_of("where", {&cond, &a});
  return where(cond, a,
               compiler::scalar_tensor(trace, b, compiler::promote_with_scalar(a.dtype(), b)));
}

Tensor astype(const Tensor& a, DType dtype) {
  compiler::trace_of("astype", {&a});
  return compiler::convert_to(a, dtype);
}

}  // namespace spmd::numpy

namespace spmd {

namespace jnp = numpy;

Tensor operator+(const Tensor& a, const Tensor& b) { return jnp::add(a, b); }
Tensor operator-(const Tensor& a, const Tensor& b) { return jnp::subtract(a, b); }
Tensor operator*(const Tensor& a, const Tensor& b) { return jnp::multiply(a, b); }
Tensor operator/(const Tensor& a, const Tensor& b) { return jnp::divide(a, b); }
Tensor operator+(const Tensor& a, Scalar b) {
  return compiler::arithmetic("add", kernels::Binary::kAdd, a, b, false);
}
Tensor operator-(const Tensor& a, Scalar b) {
  return compiler::arithmetic("subtract", kernels::Binary::kSub, a, b, false);
}
Tensor operator*(const Tensor& a, Scalar b) {
  return compiler::arithmetic("multiply", kernels::Binary::kMul, a, b, false);
}
Tensor operator/(const Tensor& a, Scalar b) {
  auto trace = compiler::trace_of("divide", {&a});
  const DType t = compiler::floating_of(compiler::promote_with_scalar(a.dtype(), b));
  return compiler::binary("divide", kernels::Binary::kDiv, a, compiler::scalar_tensor(trace, b, t),
                          t);
}
Tensor operator+(Scalar a, const Tensor& b) {
  return compiler::arithmetic("add", kernels::Binary::kAdd, b, a, true);
}
Tensor operator-(Scalar a, const Tensor& b) {
  return compiler::arithmetic("subtract", kernels::Binary::kSub, b, a, true);
}
Tensor operator*(Scalar a, const Tensor& b) {
  return compiler::arithmetic("multiply", kernels::Binary::kMul, b, a, true);
}
Tensor operator/(Scalar a, const Tensor& b) {
  auto trace = compiler::trace_of("divide", {&b});
  const DType t = compiler::floating_of(compiler::promote_with_scalar(b.dtype(), a));
  return compiler::binary("divide", kernels::Binary::kDiv, compiler::scalar_tensor(trace, a, t), b,
                          t);
}
Tensor operator-(const Tensor& a) { return jnp::negative(a); }
Tensor operator<(const Tensor& a, const Tensor& b) { return jnp::less(a, b); }
Tensor operator<=(const Tensor& a, const Tensor& b) { return jnp::less_equal(a, b); }
Tensor operator>(const Tensor& a, const Tensor& b) { return jnp::greater(a, b); }
Tensor operator>=(const Tensor& a, const Tensor& b) { return jnp::greater_equal(a, b); }
Tensor operator<(const Tensor& a, Scalar b) {
  return compiler::arithmetic("less", kernels::Binary::kLt, a, b, false);
}
Tensor operator>(const Tensor& a, Scalar b) {
  return compiler::arithmetic("greater", kernels::Binary::kGt, a, b, false);
}

}  // namespace spmd
