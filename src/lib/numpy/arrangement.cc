// spmd::numpy's take, stack, swapaxes and moveaxis: gathers, reshapes, concatenations and
// transposes under jax.numpy's names.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <limits>
#include <vector>

#include "jit/lax.h"
#include "jit/trace.h"
#include "lib/numpy/internal.h"
#include "spmd/error.h"
#include "spmd/numpy.h"

namespace spmd::numpy {

using internal::normalize_axis;

namespace {

// jnp.take's fill value for an index out of range, by a's dtype (uint64's, whose highest value
// a Scalar cannot hold, is take_fill's).
Scalar fill_value(DType t) {
  switch (t) {
    case DType::kBool:
      return Scalar(true);
    case DType::kInt8:
      return Scalar(int64_t{INT8_MIN});
    case DType::kInt16:
      return Scalar(int64_t{INT16_MIN});
    case DType::kInt32:
      return Scalar(int64_t{INT32_MIN});
    case DType::kInt64:
      return Scalar(int64_t{INT64_MIN});
    case DType::kUInt8:
      return Scalar(int64_t{UINT8_MAX});
    case DType::kUInt16:
      return Scalar(int64_t{UINT16_MAX});
    case DType::kUInt32:
      return Scalar(int64_t{UINT32_MAX});
    default:
      return Scalar(std::numeric_limits<double>::quiet_NaN());
  }
}

// The fill value of `t`, of `shape`.
Tensor take_fill(DType t, const Shape& shape) {
  if (t == DType::kUInt64) return invert(full(shape, Scalar(0), t));  // every bit set
  return full(shape, fill_value(t), t);
}

}  // namespace

Tensor take(const Tensor& a, const Tensor& indices, std::optional<int> axis) {
  compiler::trace_of("take", {&a, &indices});
  if (!axis) return take(reshape(a, {a.size()}), indices, 0);
  if (is_floating(indices.dtype()) || indices.dtype() == DType::kBool) {
    throw InvalidArgument(fmt::format("take: indices must be integers, not {}",
                                      compiler::type_text(indices.dtype(), indices.shape())));
  }
  const int ax = normalize_axis("take", *axis, a.shape());
  const Shape in = a.shape();
  const Shape index_shape = indices.shape();  // (shape() returns by value)
  const int64_t n = in[static_cast<size_t>(ax)];
  Shape out_shape(in.begin(), in.begin() + ax);
  out_shape.insert(out_shape.end(), index_shape.begin(), index_shape.end());
  out_shape.insert(out_shape.end(), in.begin() + ax + 1, in.end());
  if (n == 0) {
    if (shape_size(index_shape) == 0) return full(out_shape, Scalar(0), a.dtype());
    throw InvalidArgument(fmt::format("take: indices into the empty axis {} of {} are out of range",
                                      ax, compiler::type_text(a.dtype(), in)));
  }
  Tensor i = astype(indices, DType::kInt32);
  i = where(less(i, Scalar(0)), i + Scalar(n), i);
  // The fill as one element the gather writes where an index is out of range: one pass, where
  // the gathered rows and a select over them were two.
  return compiler::lax::take_filled(a, i, ax, take_fill(a.dtype(), Shape{}));
}

Tensor take_clipped(const Tensor& a, const Tensor& indices, int axis) {
  compiler::trace_of("take", {&a, &indices});
  if (is_floating(indices.dtype()) || indices.dtype() == DType::kBool) {
    throw InvalidArgument(fmt::format("take: indices must be integers, not {}",
                                      compiler::type_text(indices.dtype(), indices.shape())));
  }
  const int ax = normalize_axis("take", axis, a.shape());
  const Shape in = a.shape();
  const int64_t n = in[static_cast<size_t>(ax)];
  if (n == 0) {  // nothing to take from: only no indices have an answer
    const Shape index_shape = indices.shape();
    if (shape_size(index_shape) != 0) {
      throw InvalidArgument(fmt::format("take: indices into the empty axis {} of {}", ax,
                                        compiler::type_text(a.dtype(), in)));
    }
    Shape out(in.begin(), in.begin() + ax);
    out.insert(out.end(), index_shape.begin(), index_shape.end());
    out.insert(out.end(), in.begin() + ax + 1, in.end());
    return full(out, Scalar(0), a.dtype());
  }
  Tensor i = astype(indices, DType::kInt32);
  i = where(less(i, Scalar(0)), i + Scalar(n), i);
  return compiler::lax::take(a, i, ax);  // which clamps into the axis
}

Tensor stack(const std::vector<Tensor>& parts, int axis) {
  if (parts.empty()) throw InvalidArgument("stack: no arrays to stack");
  const Shape& shape = parts[0].shape();
  Shape longer = shape;
  longer.push_back(1);
  const int ax = normalize_axis("stack", axis, longer);
  std::vector<Tensor> expanded;
  for (const Tensor& p : parts) {
    compiler::trace_of("stack", {&parts[0], &p});
    if (p.shape() != shape) {
      throw InvalidArgument(
          fmt::format("stack: all input arrays must have the same shape: ({}) "
                      "and ({})",
                      fmt::join(shape, ", "), fmt::join(p.shape(), ", ")));
    }
    expanded.push_back(expand_dims(p, ax));
  }
  return concatenate(expanded, ax);
}

Tensor swapaxes(const Tensor& a, int axis1, int axis2) {
  compiler::trace_of("swapaxes", {&a});
  const int i = normalize_axis("swapaxes", axis1, a.shape());
  const int j = normalize_axis("swapaxes", axis2, a.shape());
  std::vector<int> perm(a.shape().size());
  for (size_t k = 0; k < perm.size(); ++k) perm[k] = static_cast<int>(k);
  std::swap(perm[static_cast<size_t>(i)], perm[static_cast<size_t>(j)]);
  return transpose(a, perm);
}

Tensor moveaxis(const Tensor& a, int source, int destination) {
  compiler::trace_of("moveaxis", {&a});
  const int from = normalize_axis("moveaxis", source, a.shape());
  const int to = normalize_axis("moveaxis", destination, a.shape());
  std::vector<int> perm;
  for (int k = 0; k < static_cast<int>(a.shape().size()); ++k) {
    if (k != from) perm.push_back(k);
  }
  perm.insert(perm.begin() + to, from);
  return transpose(a, perm);
}

}  // namespace spmd::numpy
