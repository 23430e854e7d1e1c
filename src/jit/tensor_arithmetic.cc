// Tensor's operators and their broadcasting and promotion rules (tensor_arithmetic.h).
#include "jit/tensor_arithmetic.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "jit/lax.h"
#include "jit/promotion.h"
#include "jit/trace.h"
#include "spmd/error.h"

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

Tensor broadcast_for_elementwise(const Tensor& t, const Shape& shape) {
  if (t.shape().empty()) return t;
  return lax::broadcast(t, shape);
}

Tensor scalar_tensor(const std::shared_ptr<Trace>& trace, const Scalar& s, DType dtype) {
  return lax::full(trace, Shape{}, dtype, s.value);
}

Tensor unary(std::string_view what, Unary code, const Tensor& a, DType dtype) {
  trace_of(what, {&a});
  return lax::unary(code, lax::convert_element_type(a, dtype));
}

Tensor binary(std::string_view what, Binary code, const Tensor& a, const Tensor& b,
              DType operand_dtype) {
  trace_of(what, {&a, &b});
  const Shape shape = broadcast_shapes(what, a.shape(), b.shape());
  const Tensor x = broadcast_for_elementwise(lax::convert_element_type(a, operand_dtype), shape);
  const Tensor y = broadcast_for_elementwise(lax::convert_element_type(b, operand_dtype), shape);
  return lax::binary(code, x, y);
}

Tensor arithmetic(std::string_view what, Binary code, const Tensor& a, const Tensor& b) {
  return binary(what, code, a, b, promote(a.dtype(), b.dtype()));
}

namespace {

// a code s (s code a when `scalar_first`), both in `dtype`.
Tensor with_scalar(std::string_view what, Binary code, const Tensor& a, const Scalar& s,
                   bool scalar_first, DType dtype) {
  const Tensor c = scalar_tensor(trace_of(what, {&a}), s, dtype);
  return scalar_first ? binary(what, code, c, a, dtype) : binary(what, code, a, c, dtype);
}

// tensor / scalar (scalar / tensor when `scalar_first`), in floating point.
Tensor divide_scalar(const Tensor& t, const Scalar& s, bool scalar_first) {
  trace_of("divide", {&t});
  return with_scalar("divide", Binary::kDiv, t, s, scalar_first,
                     floating_of(promote_with_scalar(t.dtype(), s)));
}

}  // namespace

Tensor arithmetic(std::string_view what, Binary code, const Tensor& a, const Scalar& s,
                  bool scalar_first) {
  trace_of(what, {&a});
  return with_scalar(what, code, a, s, scalar_first, promote_with_scalar(a.dtype(), s));
}

Tensor divide(const Tensor& a, const Tensor& b) {
  return binary("divide", Binary::kDiv, a, b, floating_of(promote(a.dtype(), b.dtype())));
}

void refuse_bool(std::string_view what, const Tensor& a) {
  if (a.dtype() == DType::kBool) {
    throw DTypeError(
        fmt::format("{}: not defined on bool ({})", what, type_text(a.dtype(), a.shape())));
  }
}

}  // namespace spmd::compiler

namespace spmd {

using compiler::arithmetic;
using kernels::Binary;

Tensor operator+(const Tensor& a, const Tensor& b) { return arithmetic("add", Binary::kAdd, a, b); }
Tensor operator-(const Tensor& a, const Tensor& b) {
  compiler::refuse_bool("subtract", a);
  return arithmetic("subtract", Binary::kSub, a, b);
}
Tensor operator*(const Tensor& a, const Tensor& b) {
  return arithmetic("multiply", Binary::kMul, a, b);
}
Tensor operator/(const Tensor& a, const Tensor& b) { return compiler::divide(a, b); }
Tensor operator+(const Tensor& a, Scalar b) { return arithmetic("add", Binary::kAdd, a, b, false); }
Tensor operator-(const Tensor& a, Scalar b) {
  return arithmetic("subtract", Binary::kSub, a, b, false);
}
Tensor operator*(const Tensor& a, Scalar b) {
  return arithmetic("multiply", Binary::kMul, a, b, false);
}
Tensor operator/(const Tensor& a, Scalar b) { return compiler::divide_scalar(a, b, false); }
Tensor operator+(Scalar a, const Tensor& b) { return arithmetic("add", Binary::kAdd, b, a, true); }
Tensor operator-(Scalar a, const Tensor& b) {
  return arithmetic("subtract", Binary::kSub, b, a, true);
}
Tensor operator*(Scalar a, const Tensor& b) {
  return arithmetic("multiply", Binary::kMul, b, a, true);
}
Tensor operator/(Scalar a, const Tensor& b) { return compiler::divide_scalar(b, a, true); }
Tensor operator-(const Tensor& a) {
  compiler::refuse_bool("negative", a);
  return compiler::unary("negative", kernels::Unary::kNeg, a, a.dtype());
}
Tensor operator<(const Tensor& a, const Tensor& b) { return arithmetic("less", Binary::kLt, a, b); }
Tensor operator<=(const Tensor& a, const Tensor& b) {
  return arithmetic("less_equal", Binary::kLe, a, b);
}
Tensor operator>(const Tensor& a, const Tensor& b) {
  return arithmetic("greater", Binary::kGt, a, b);
}
Tensor operator>=(const Tensor& a, const Tensor& b) {
  return arithmetic("greater_equal", Binary::kGe, a, b);
}
Tensor operator<(const Tensor& a, Scalar b) { return arithmetic("less", Binary::kLt, a, b, false); }
Tensor operator>(const Tensor& a, Scalar b) {
  return arithmetic("greater", Binary::kGt, a, b, false);
}

}  // namespace spmd
