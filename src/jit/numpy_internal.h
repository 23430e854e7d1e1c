// Helpers shared by spmd::numpy's files (numpy_*.cc): broadcasting, conversion, scalars.
#pragma once

#include <memory>
#include <string_view>

#include "jit/trace.h"
#include "spmd/tensor.h"

namespace spmd::compiler {

// NumPy's broadcast of two shapes; InvalidArgument naming `what` when they do not.
Shape broadcast_shapes(std::string_view what, const Shape& a, const Shape& b);
// `t` as `dtype` (itself when it already is).
Tensor convert_to(const Tensor& t, DType dtype);
// A rank-0 constant of `dtype` in `trace`.
Tensor scalar_tensor(const std::shared_ptr<Trace>& trace, const Scalar& s, DType dtype);
// Axis `axis` of a rank-`rank` array, negative counting from the end; InvalidArgument naming
// `what` and the shape when out of range.
int normalize_axis(std::string_view what, int axis, const Shape& shape);

// An out_sharding= given to `what` for a result of rank `rank`, on `trace`'s mesh: its Explicit
// axes, canonical (sharding_in_types.h: checked_type_spec). InvalidArgument for a spec naming
// Auto axes, as JAX refuses them.
PartitionSpec out_sharding_spec(const Trace& trace, std::string_view what,
                                const PartitionSpec& out_sharding, size_t rank);

}  // namespace spmd::compiler
