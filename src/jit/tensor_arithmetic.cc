// Tensor's operators and their broadcasting and promotion rules (tensor_arithmetic.h).
#include "jit/tensor_arithmetic.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <limits>

#include "jit/lax.h"
#include "jit/program.h"
#include "jit/promotion.h"
#include "jit/sharding_in_types.h"
#include "jit/trace.h"
#include "spmd/config.h"
#include "spmd/error.h"
#include "spmd/host_array.h"

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

std::vector<Tensor> broadcast_arrays(std::string_view what, std::span<const Tensor> operands,
                                     const Shape& shape) {
  std::vector<Tensor> out;
  out.reserve(operands.size());
  std::shared_ptr<Trace> trace;
  for (const Tensor& t : operands) {
    trace = trace_of(what, {&operands.front(), &t});
    out.push_back(broadcast_for_elementwise(t, shape));
  }
  if (trace == nullptr || trace->mesh() == nullptr || !has_explicit_axes(*trace->mesh())) {
    return out;
  }
  // JAX takes operands of one shape as they are: select then refuses differing shardings.
  const bool one_shape = std::all_of(operands.begin(), operands.end(), [&](const Tensor& t) {
    return t.shape() == operands.front().shape();
  });
  if (one_shape) return out;
  std::vector<ValueType> types;
  types.reserve(out.size());
  for (const Tensor& t : out) types.push_back(trace->op(t.value()).type());
  const PartitionSpec joint = broadcast_type_spec(what, types, shape.size());
  for (Tensor& t : out) {
    if (!t.shape().empty()) t = retyped(t, joint);
  }
  return out;
}

bool exact_in_double(const Scalar& s) {
  constexpr int64_t kExact = int64_t{1} << 53;  // every integer up to 2^53 is a double
  return s.floating || (s.integer >= -kExact && s.integer <= kExact);
}

namespace {

// An integer as `dtype` holds it: modulo 2^bits, as JAX converts a weak int to a narrow integer.
double wrapped(int64_t v, DType dtype) {
  switch (dtype) {
    case DType::kInt8:
      return static_cast<int8_t>(v);
    case DType::kInt16:
      return static_cast<int16_t>(v);
    case DType::kInt32:
      return static_cast<int32_t>(v);
    case DType::kUInt8:
      return static_cast<uint8_t>(v);
    case DType::kUInt16:
      return static_cast<uint16_t>(v);
    case DType::kUInt32:
      return static_cast<uint32_t>(v);
    default:
      return static_cast<double>(v);
  }
}

}  // namespace

Tensor scalar_tensor(const std::shared_ptr<Trace>& trace, const Scalar& s, DType dtype) {
  if (!exact_in_double(s) && dtype == DType::kInt64) {
    return lax::constant(trace, HostArray::from_vector(std::vector<int64_t>{s.integer}, {}));
  }
  if (!exact_in_double(s) && dtype == DType::kUInt64) {
    const auto bits = static_cast<uint64_t>(s.integer);
    return lax::constant(trace, HostArray::from_vector(std::vector<uint64_t>{bits}, {}));
  }
  if (!s.floating && !s.boolean && !is_floating(dtype) && dtype != DType::kBool) {
    return lax::full(trace, Shape{}, dtype, wrapped(s.integer, dtype));
  }
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

void check_scalar_range(std::string_view what, const Scalar& s, DType operand) {
  if (s.floating || s.boolean) return;
  const bool wide = config::x64_enabled() || dtype_size(operand) == 8;
  const int64_t limit =
      wide ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int32_t>::max();
  if (s.integer >= -limit - 1 && s.integer <= limit) return;
  throw OverflowError(fmt::format(
      "{}: the Python int {} does not fit {}, the integer type it enters as{}", what, s.integer,
      wide ? "int64" : "int32",
      wide ? "" : " with x64 off (spmd.config.update('jax_enable_x64', True) widens it)"));
}

namespace {

// a code s (s code a when `scalar_first`), both in `dtype`.
Tensor with_scalar(std::string_view what, Binary code, const Tensor& a, const Scalar& s,
                   bool scalar_first, DType dtype) {
  check_scalar_range(what, s, a.dtype());
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

namespace {

DType numeric_of(DType t, bool numeric) {
  return numeric && t == DType::kBool ? config::default_int_dtype() : t;
}

}  // namespace

std::pair<Tensor, Tensor> promoted(std::string_view what, const Tensor& a, const Tensor& b,
                                   bool numeric) {
  trace_of(what, {&a, &b});
  const Shape shape = broadcast_shapes(what, a.shape(), b.shape());
  const DType dtype = numeric_of(promote(a.dtype(), b.dtype()), numeric);
  const Tensor operands[] = {lax::convert_element_type(a, dtype),
                             lax::convert_element_type(b, dtype)};
  std::vector<Tensor> out = broadcast_arrays(what, operands, shape);
  return {out[0], out[1]};
}

std::pair<Tensor, Tensor> promoted(std::string_view what, const Tensor& a, const Scalar& s,
                                   bool scalar_first, bool numeric) {
  check_scalar_range(what, s, a.dtype());
  const DType dtype = numeric_of(promote_with_scalar(a.dtype(), s), numeric);
  const Tensor c = scalar_tensor(trace_of(what, {&a}), s, dtype);
  const Tensor t = lax::convert_element_type(a, dtype);
  return scalar_first ? std::pair{c, t} : std::pair{t, c};
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
  // Refused only where both are bool (NumPy's and JAX's rule): bool - float32 is float32.
  if (b.dtype() == DType::kBool) compiler::refuse_bool("subtract", a);
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
