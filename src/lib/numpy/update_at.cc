// x.at[indices].set/add/multiply/min/max (numpy.h's update_at) over the scatter operation.
#include <fmt/format.h>

#include "jit/lax.h"
#include "jit/trace.h"
#include "spmd/error.h"
#include "spmd/numpy.h"

namespace spmd::numpy {
namespace {

kernels::ScatterCombine combine_of(IndexUpdate how) {
  switch (how) {
    case IndexUpdate::kSet:
      return kernels::ScatterCombine::kSet;
    case IndexUpdate::kAdd:
      return kernels::ScatterCombine::kAdd;
    case IndexUpdate::kMultiply:
      return kernels::ScatterCombine::kMul;
    case IndexUpdate::kMin:
      return kernels::ScatterCombine::kMin;
    case IndexUpdate::kMax:
      return kernels::ScatterCombine::kMax;
  }
  throw InvalidArgument("x.at[indices]: unknown update");
}

}  // namespace

Tensor update_at(const Tensor& a, const Tensor& indices, const Tensor& values, IndexUpdate how,
                 bool clip, bool unique_indices) {
  compiler::trace_of("x.at[indices]", {&a, &indices, &values});
  if (a.ndim() == 0 || is_floating(indices.dtype()) || indices.dtype() == DType::kBool) {
    throw InvalidArgument(fmt::format(
        "x.at[indices]: spmd updates at integer indices into the leading axis of an array of "
        "rank >= 1, not {} at {}",
        compiler::type_text(a.dtype(), a.shape()),
        compiler::type_text(indices.dtype(), indices.shape())));
  }
  const DType dtype = promote_types(a.dtype(), values.dtype());
  if (dtype == DType::kBool && (how == IndexUpdate::kAdd || how == IndexUpdate::kMultiply)) {
    throw DTypeError(fmt::format(
        "x.at[indices].{}: {} does not accept dtype bool (JAX's "
        "TypeError); set, min and max take bool",
        how == IndexUpdate::kAdd ? "add" : "multiply", how == IndexUpdate::kAdd ? "add" : "mul"));
  }
  const Shape shape = a.shape();
  const int64_t n = shape[0];
  const int64_t count = shape_size(indices.shape());
  Shape updates_shape = indices.shape();
  updates_shape.insert(updates_shape.end(), shape.begin() + 1, shape.end());
  const Tensor v = broadcast_to(values, updates_shape);  // JAX's error for values that do not fit
  if (n == 0 || shape_size(updates_shape) == 0) return a;
  Tensor i = reshape(astype(indices, DType::kInt32), {count});
  i = where(less(i, Scalar(0)), i + Scalar(n), i);
  if (clip) i = numpy::clip(i, Scalar(0), Scalar(n - 1));
  Shape flat = shape;
  flat[0] = count;
  const Tensor out = compiler::lax::scatter(combine_of(how), astype(a, dtype), i,
                                            reshape(astype(v, dtype), flat), 0, unique_indices);
  return astype(out, a.dtype());
}

Tensor add_at(const Tensor& a, const Tensor& indices, const Tensor& values) {
  return update_at(a, indices, values, IndexUpdate::kAdd);
}

}  // namespace spmd::numpy
