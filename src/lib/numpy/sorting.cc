// spmd::numpy's sort, argsort and searchsorted: one stable sort along an axis (lax::sort and its
// kin), its keys widened for the dtypes the kernel does not order; the binary search of
// lax::search_sorted, whose right side is the left side of the next value up.
#include <fmt/format.h>

#include <string_view>

#include "jit/lax.h"
#include "jit/promotion.h"
#include "jit/tensor_arithmetic.h"
#include "jit/trace.h"
#include "lib/numpy/internal.h"
#include "spmd/error.h"
#include "spmd/numpy.h"

namespace spmd::numpy {
namespace {

using internal::normalize_axis;

// The keys the kernels order for `a`: `a` itself for 32- and 64-bit integers and floats, else
// its values widened exactly (bool, 8- and 16-bit integers to int32; float16 and bfloat16 to
// float32, which keeps their order, -0, infinities and NaN).
Tensor sort_keys(const Tensor& a) {
  switch (a.dtype()) {
    case DType::kBool:
    case DType::kInt8:
    case DType::kInt16:
    case DType::kUInt8:
    case DType::kUInt16:
      return compiler::lax::convert_element_type(a, DType::kInt32);
    case DType::kFloat16:
    case DType::kBFloat16:
      return compiler::lax::convert_element_type(a, DType::kFloat32);
    default:
      return a;
  }
}

// The least value above `v` in JAX's sort order, for keys of sort_keys' dtypes: v + 1 for
// integers; for floats the next representable number up, by the bits (NaN above +inf, as NaN
// sorts after every number), and the least normal number above ±0 and the subnormals, which
// the CPU kernels compare as zero, as XLA's CPU backend does. `last` is set where nothing is
// above v (an integer's maximum, where v + 1 wraps; NaN).
Tensor next_up(const Tensor& v, Tensor& last) {
  if (!is_floating(v.dtype())) {
    Tensor up = v + 1;
    last = up < v;
    return up;
  }
  const DType bits_type = v.dtype() == DType::kFloat64 ? DType::kInt64 : DType::kInt32;
  const Tensor bits = compiler::lax::bitcast_convert_type(v, bits_type);
  const double least_normal = v.dtype() == DType::kFloat64 ? 0x1p52 : 0x1p23;  // its bits
  const Tensor stepped =
      where(v > 0, bits + 1, where(v < 0, bits - 1, compiler::lax::full_like(bits, least_normal)));
  last = isnan(v);
  return compiler::lax::bitcast_convert_type(stepped, v.dtype());
}

}  // namespace

Tensor searchsorted(const Tensor& a, const Tensor& v, std::string_view side) {
  compiler::trace_of("searchsorted", {&a, &v});
  if (a.ndim() != 1) {
    throw InvalidArgument(fmt::format("searchsorted: a should be 1-dimensional, not of shape ({})",
                                      fmt::join(a.shape(), ", ")));
  }
  if (side != "left" && side != "right") {
    throw InvalidArgument(fmt::format(
        "searchsorted: {:?} is an invalid value for keyword 'side'; expected 'left' or 'right'",
        side));
  }
  const int64_t n = a.shape()[0];
  if (n == 0) return compiler::lax::full(v.trace(), v.shape(), DType::kInt32, 0);
  const DType common = compiler::promote(a.dtype(), v.dtype());
  const Tensor keys = sort_keys(compiler::lax::convert_element_type(a, common));
  const Tensor queries = sort_keys(compiler::lax::convert_element_type(v, common));
  if (side == "left") return compiler::lax::search_sorted(keys, queries);
  Tensor last;
  const Tensor found = compiler::lax::search_sorted(keys, next_up(queries, last));
  return where(last,
               compiler::lax::full(v.trace(), v.shape(), DType::kInt32, static_cast<double>(n)),
               found);
}

Tensor sort(const Tensor& a, std::optional<int> axis, bool descending) {
  compiler::trace_of("sort", {&a});
  if (!axis) return sort(reshape(a, {a.size()}), 0, descending);
  const int ax = normalize_axis("sort", *axis, a.shape());
  const Tensor keys = sort_keys(a);
  if (keys.dtype() == a.dtype()) return compiler::lax::sort(a, ax, descending);
  return compiler::lax::sort_key_val(keys, a, ax, descending);
}

Tensor argsort(const Tensor& a, std::optional<int> axis, bool descending) {
  compiler::trace_of("argsort", {&a});
  if (!axis) return argsort(reshape(a, {a.size()}), 0, descending);
  return compiler::lax::argsort(sort_keys(a), normalize_axis("argsort", *axis, a.shape()),
                                descending);
}

Tensor sort_key_val(const Tensor& keys, const Tensor& values, int axis) {
  compiler::trace_of("sort_key_val", {&keys, &values});
  return compiler::lax::sort_key_val(sort_keys(keys), values,
                                     normalize_axis("sort_key_val", axis, keys.shape()));
}

}  // namespace spmd::numpy
