// Block operations: the few the examples need inside shard_map (a linear model's forward and
// backward pass, an optimiser step), offered as a convenience, not a tensor library.
//
// Every function is pure and thread-safe, takes blocks by const reference and returns a new,
// owning block. Arithmetic runs on numeric dtypes (not bool); float16 and bfloat16 compute in
// float32 and round to nearest even once per result. Errors are InvalidArgument naming the
// operation, the shapes and the dtypes. The kernels run on the backend of the blocks' memory
// (the device seam, src/kernels/backend.h), as jit's do.
#pragma once

#include "spmd/block.h"

namespace spmd {

// Element-wise a op b, NumPy broadcasting: shapes are aligned from the last dimension, and each
// pair of sizes must be equal or one of them 1. Both operands have the same dtype. div on
// integers truncates toward zero and throws InvalidArgument on a zero divisor.
Block add(const Block& a, const Block& b);
Block sub(const Block& a, const Block& b);
Block mul(const Block& a, const Block& b);
Block div(const Block& a, const Block& b);

// a * s, element-wise (s converted to a's dtype's computation type: integers truncate).
Block scale(const Block& a, double s);
// The square root of each element; floating dtypes only.
Block sqrt(const Block& a);

// The sum of every element: a rank-0 block of a's dtype.
Block sum(const Block& a);
// The sum along `axis` (negative counts from the end), which the result drops.
Block sum(const Block& a, int axis);
// sum / count; floating dtypes only.
Block mean(const Block& a);
Block mean(const Block& a, int axis);

// The matrix product of two 2-D float32 or float64 blocks, through BLAS (OpenBLAS): a is (m, k)
// — (k, m) when transpose_a — and b (k, n) — (n, k) when transpose_b; the result is (m, n).
Block matmul(const Block& a, const Block& b, bool transpose_a = false, bool transpose_b = false);

}  // namespace spmd
