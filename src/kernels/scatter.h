// XLA's scatter along one axis with a combiner: what x.at[indices].set/add/multiply/min/max
// computes. Updates apply one after another in their order, as XLA's CPU scatter loops over them,
// so a repeated index sees each of its updates in turn (the last set wins; sums and products
// round step by step). Pure; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>

#include "spmd/dtype.h"
#include "spmd/shape.h"

namespace spmd::kernels {

// How an update meets the element it lands on.
enum class ScatterCombine : uint8_t { kSet, kAdd, kMul, kMin, kMax };

// The name a program's text prints for `how` ("set", "add", "mul", "min", "max").
const char* scatter_combine_name(ScatterCombine how);

// out (`shape`, of `dtype`, row-major) holds the operand on entry. For each of the `count`
// indices in order, the update slice outer × 1 × inner of `updates` (`shape` with shape[axis]
// replaced by count) meets out's slice at indices[i] along `axis`: replaces it (kSet) or is
// combined with it element by element as binary() combines (add and mul rounded to dtype, the
// half types through float32; min and max IEEE's, NaN winning, -0 below +0; integers wrapping;
// on bool, add and max are or, mul and min and, as XLA's on predicates). An index outside
// 0 … shape[axis] - 1 is dropped, as XLA's scatter drops it. Every dtype is taken.
void scatter(ScatterCombine how, DType dtype, const std::byte* updates, const Shape& shape,
             int axis, const int32_t* indices, int64_t count, std::byte* out);

}  // namespace spmd::kernels
