// spmd::numpy's sort and argsort: one stable sort along an axis (lax::sort and its kin), its
// keys widened for the dtypes the kernel does not order.
#include "jit/lax.h"
#include "jit/trace.h"
#include "lib/numpy/internal.h"
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

}  // namespace

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
