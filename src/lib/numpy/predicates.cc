// spmd::numpy's predicates and the reductions built on them: isnan, isfinite, all, any, argmin
// and clip, each composed of element-wise, reduction and argmax primitives as jax.numpy composes
// them.
#include <fmt/format.h>

#include "jit/lax.h"
#include "jit/trace.h"
#include "spmd/error.h"
#include "spmd/numpy.h"

namespace spmd::numpy {

Tensor isnan(const Tensor& a) {
  compiler::trace_of("isnan", {&a});
  if (!is_floating(a.dtype())) return compiler::lax::full_like(astype(a, DType::kBool), 0);
  return not_equal(a, a);
}

Tensor isfinite(const Tensor& a) {
  compiler::trace_of("isfinite", {&a});
  if (!is_floating(a.dtype())) return compiler::lax::full_like(astype(a, DType::kBool), 1);
  // a - a is 0 for every finite value, NaN for ±inf and NaN.
  return equal(subtract(a, a), Scalar(0.0));
}

Tensor clip(const Tensor& a, const Tensor& lo, const Tensor& hi) {
  return minimum(hi, maximum(lo, a));
}

Tensor clip(const Tensor& a, Scalar lo, Scalar hi) { return minimum(maximum(a, lo), hi); }

Tensor any(const Tensor& a, const AxisList& axes, bool keepdims) {
  compiler::trace_of("any", {&a});
  return greater(sum(astype(a, DType::kBool), axes, keepdims), Scalar(0));
}

Tensor all(const Tensor& a, const AxisList& axes, bool keepdims) {
  compiler::trace_of("all", {&a});
  return equal(sum(logical_not(astype(a, DType::kBool)), axes, keepdims), Scalar(0));
}

Tensor argmin(const Tensor& a, std::optional<int> axis) {
  compiler::trace_of("argmin", {&a});
  // An order-reversing map that keeps ties and NaN: -x on the floating types, ~x (-x - 1, which
  // never overflows) on the integers, not on bool.
  if (a.dtype() == DType::kBool) return argmax(logical_not(a), axis);
  if (is_floating(a.dtype())) return argmax(negative(a), axis);
  return argmax(invert(a), axis);
}

}  // namespace spmd::numpy
