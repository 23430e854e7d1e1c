// What the block operations share: describing a block in errors, the dtype checks, and the one
// way they reach a kernel: through the backend of the block's memory (kernels/backend.h), never
// a CPU kernel function directly, so a GPU backend serves them as it serves jit's executor.
#pragma once

#include <string>

#include "kernels/backend.h"
#include "kernels/elementwise.h"
#include "spmd/block.h"

namespace spmd::ops {

// The backend that computes on `b`'s memory (kernels::backend_of): the CPU's for host memory.
const kernels::Backend& backend_of(const Block& b);

// op(a), element-wise, in a's dtype: one kernel call (a one-step chain) on a's backend.
Block unary(kernels::Unary op, const Block& a);
// a op b, element-wise, in a's dtype; b holds a.size() elements or one (the same for each).
// A comparison's result is bool. The dtypes are trusted (the caller checked them).
Block binary(kernels::Binary op, const Block& a, const Block& b);
// `b` broadcast to `shape` (NumPy's rules, checked by the caller); `b` itself when it has it.
Block broadcast_to(const Block& b, const Shape& shape);

// "float32[2, 3]".
std::string describe(const Block& b);
// Throws InvalidArgument naming `what` and the block unless its dtype is numeric (not bool).
void require_numeric(const char* what, const Block& b);
// Throws InvalidArgument naming `what` and the block unless its dtype is floating.
void require_floating(const char* what, const Block& b);
// `b` as float32 (half types) or itself.
Block widened(const Block& b);
// `b` in `dtype` (itself when it has it); to a half type, rounding once.
Block converted(const Block& b, DType dtype);

// x op s, element-wise, with s converted to x's dtype (integers truncate it); x is in its
// computation type already (see widened).
Block with_scalar(kernels::Binary op, const Block& x, double s);

}  // namespace spmd::ops
