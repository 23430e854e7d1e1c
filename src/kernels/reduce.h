// Reductions along one axis, over Eigen 3.4 (the array viewed as outer × extent × inner, whole
// rows of `inner` elements accumulated in memory order). Several axes are reduced one at a time
// by the caller. Accumulation is in the output dtype; float16 and bfloat16 accumulate in float32
// and round once. A float32 sum of contiguous rows (inner = 1) of up to 2^15 elements adds in
// XLA's order (xla_sum.h: JAX's bits). Other floating-point sums add in order within blocks (128
// rows; 4096 elements of a contiguous row, in 64 or 32 interleaved lanes: contiguous_sum.h) and
// combine blocks pairwise, so the error grows as the logarithm of the length; the order depends on
// the shape alone, never on the data's address or the calling thread's team (thread_team.h), which
// splits slabs, columns or the top of the pairwise tree. Max and min propagate NaN, as jnp.max
// does, and give +0 (max) or -0 (min) of zeros of both signs, as jnp.maximum/minimum of the two do,
// whatever the order (extremes.h: AVX2's lanes). Products multiply each column's rows in order, a
// contiguous row in 32 lanes (an order set by the shape alone), integers wrapping as XLA's do;
// the team never splits one product's rows. Pure; thread-safe.
// Open to lib/: the reductions lax::reduce takes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string_view>

#include "spmd/dtype.h"
#include "spmd/shape.h"

namespace spmd::kernels {

enum class Reduce : uint8_t { kSum, kMax, kMin, kProd };
std::string_view name(Reduce op);

// out (shape: `shape` without `axis`, dtype `out_dtype`) = op over `axis` of in (dtype `dtype`).
// kSum may widen (out_dtype of the same kind, at least as wide); kMax/kMin/kProd keep the dtype
// (float16 and bfloat16 computed in float32, rounded once; bool's product is all()).
// Reducing an empty axis gives 0 for kSum, 1 for kProd, and throws InvalidArgument for
// kMax/kMin (NumPy's "zero-size array to reduction operation maximum which has no identity").
void reduce(Reduce op, DType dtype, const std::byte* in, const Shape& shape, int axis,
            DType out_dtype, std::byte* out);

// How many of the last dimensions of `shape` a reduction over `axes` (ascending, distinct)
// reduces as one row, as XLA's CPU program does: a float32 sum (dtype and out_dtype float32) of
// an input of 4,096 elements or more goes to YNNPACK, which flattens reduced dimensions that are
// the input's last into one (JAX's sum of a (64, 64) float32 array is the sum of one row of
// 4,096 in YNNPACK's order), merged here while that row holds at most 2^15 elements (xla_sum.h:
// the longest row spmd sums in XLA's order). 0 or 1 where the axes go one at a time.
int merged_trailing_axes(Reduce op, DType dtype, DType out_dtype, const Shape& shape,
                         std::span<const int64_t> axes);

// out[r] = op over row r of the `rows` × `extent` row-major `in` (float32 or float64), on the
// calling thread alone: the values reduce() gives over the last axis of an input of
// `input_rows` such rows, these among them (the same summation order, which for float32 sums
// depends on the whole input's size: xla_sum.h). run_chain_reduce (chain.h) reduces its rows
// so, a few at a time: short rows' sums many rows a pass (ynn_reduce.h: ynn_short_row_sums),
// maxima and minima as reduce() takes them (extremes.h: extremes_of_rows), where a call a row
// cost more than the row (jnp.linalg.norm over the last axis of (2^20, 3) under jit: 4.0 ->
// 0.78 ms, JAX's 1.7-2.2).
void reduce_rows(Reduce op, DType dtype, const std::byte* in, int64_t rows, int64_t extent,
                 int64_t input_rows, std::byte* out);

// Writes elements [first, last) of row `row` of an array made on demand to `dst`
// (reduce_made_rows).
using MakeRow = std::function<void(int64_t row, int64_t first, int64_t last, std::byte* dst)>;
// A new MakeRow, for one thread's use: each part of a team makes its rows with its own.
using MakeRows = std::function<MakeRow()>;

// out (width elements) = op over the `rows` rows of a rows × width float32 or float64 array
// whose rows are made as they are needed, a row's columns at a time, never the whole array at
// once: the values reduce() gives over an axis with more than one element after it, in its order
// (sums: kSumBlock rows in order, blocks combined pairwise; max and min as above).
// The calling thread's team (thread_team.h) takes the top of the pairwise tree where there are
// more rows than one block, each part making whole rows in memory order, else ranges of
// columns; the values never depend on it. run_chain_reduce_axis (chain.h) makes the rows with a
// chain. rows > 0, width > 0 (InvalidArgument otherwise).
void reduce_made_rows(Reduce op, DType dtype, int64_t rows, int64_t width, const MakeRows& makers,
                      std::byte* out);

// out (int32, shape without `axis`) = the index of the first maximum along `axis` (the first NaN
// counts as the maximum, as in NumPy and JAX). An empty axis throws InvalidArgument.
void argmax(DType dtype, const std::byte* in, const Shape& shape, int axis, std::byte* out);

}  // namespace spmd::kernels
