// What the block operations share: describing a block in errors, and the dtype checks, over
// the kernels of src/kernels/.
#pragma once

#include <string>

#include "kernels/elementwise.h"
#include "spmd/block.h"

namespace spmd::ops {

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
