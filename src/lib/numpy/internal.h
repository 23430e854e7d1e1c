// What spmd::numpy's files (and spmd::random, beside them in src/lib) share: axes as NumPy takes
// them, out_sharding= as JAX checks it, and NumPy's reductions.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "jit/lax.h"
#include "kernels/reduce.h"
#include "spmd/numpy.h"
#include "spmd/partition_spec.h"
#include "spmd/shape.h"
#include "spmd/tensor.h"

namespace spmd::compiler {
class Trace;
}

namespace spmd::numpy::internal {

// Axis `axis` of `shape`, negative counting from the end; InvalidArgument naming `what` and the
// shape when out of range.
int normalize_axis(std::string_view what, int axis, const Shape& shape);
// The sorted, distinct axes of `axes` (every axis when empty); InvalidArgument naming `what` for
// one out of range or repeated.
std::vector<int64_t> reduced_axes(std::string_view what, const AxisList& axes, const Shape& shape);

// An out_sharding= given to `what` for a result of rank `rank`, on `trace`'s mesh: its Explicit
// axes, canonical (sharding_in_types.h: checked_type_spec). InvalidArgument outside a jit over a
// mesh, or for a spec naming Auto axes, as JAX refuses them.
PartitionSpec out_sharding_spec(const compiler::Trace& trace, std::string_view what,
                                const PartitionSpec& out_sharding, size_t rank);

// The largest finite value of a floating dtype, as a double (bfloat16's is 3.39e38, below
// float32's).
inline double largest_finite(DType t) {
  switch (t) {
    case DType::kFloat16:
      return 65504.0;
    case DType::kBFloat16:
      return 3.3895313892515355e38;
    case DType::kFloat32:
      return 3.4028234663852886e38;
    default:
      return 1.7976931348623157e308;
  }
}

// `a` in its floating dtype (integers and bool in the default float), traced for `what`.
Tensor floating(const char* what, const Tensor& a);

// f on x, computed in float32 for a half type and rounded once at the end, as XLA's CPU backend
// computes a fused chain of float16 or bfloat16 steps (per-step rounding differed from JAX's
// sinh and cosh in most float16 and bfloat16 values).
template <class F>
Tensor in_float32(const Tensor& x, F f) {
  if (!is_half_dtype(x.dtype())) return f(x);
  namespace lax = compiler::lax;
  return lax::convert_element_type(f(lax::convert_element_type(x, DType::kFloat32)), x.dtype());
}

// `code` over `axes` of `a` converted to `dtype` (keepdims keeps them at size 1).
Tensor reduce(std::string_view what, kernels::Reduce code, const Tensor& a, const AxisList& axes,
              bool keepdims, DType dtype);

}  // namespace spmd::numpy::internal
