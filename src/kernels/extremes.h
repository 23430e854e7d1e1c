// The largest and smallest element of float32 and float64 data, and the index of the first
// largest: jnp.max, jnp.min and jnp.argmax's kernels (reduce.h), along one contiguous row or
// folded across the rows of a slab, in AVX2's lanes where the CPU has them.
//
// The values are JAX's and do not depend on the order of folding, so lanes, threads and shards
// may take the elements in any order and the bits stay the same:
// - max (min) is NaN when any element is NaN; else the largest (smallest) value; where that is
//   zero and zeros of both signs occur, +0 (-0), as jnp.maximum (jnp.minimum) of the two and
//   XLA's reductions of small arrays give (XLA's vectorised reductions of long rows may give
//   either sign; we keep the one answer).
// - Where the calling thread reads subnormals as zero (as jit runs: float_environment.h), every
//   path compares and returns them as zeros of their sign, as XLA's max does (JAX's
//   max([1e-45] * 3) is 0), whether a vector lane or a row's tail meets them; a single element
//   is returned as it is.
// - argmax is the index of the first NaN when there is one, else the first index whose value
//   equals the maximum (0 and -0 are equal: the first zero).
//
// Before, the contiguous fold was a scalar loop after a separate NaN scan, and a fold across rows
// an Eigen select that allocated per row: jnp.max over 4096 x 2048 float32 took 4.5-7 ms against
// JAX's 1.0-1.5, and argmax over the leading axis 90 ms against 31 (one thread, strided columns).
//
// Pure functions of their arguments; thread-safe. Internal to kernels/ (reduce.cc).
#pragma once

#include <cstddef>
#include <cstdint>

#include "spmd/dtype.h"

namespace spmd::kernels {

// max (`maximum`) or min over x[0, n), n >= 1, as above; a NaN result is the default quiet NaN.
float extreme_of(bool maximum, const float* x, int64_t n);
double extreme_of(bool maximum, const double* x, int64_t n);

// out[r] = extreme_of(maximum, x + r * stride, n) for r < count (each row n >= 1 elements, as
// above), the same bits as extreme_of, in whichever of two orders reads this machine's memory
// faster:
// - four rows at a time in AVX2's lanes, each read as its own stream: more of memory's reads in
//   flight. On session 66's machine (15 GB/s a row at a time), a loop over a float32
//   4096 x 2048 took 1.7-2.0 ms so, against 2.4-2.9 a row at a time (bench/RESULTS.md).
// - one row after another: a single stream for the prefetcher. On a Zen 5 VM reading 60 GB/s,
//   0.65 ms against 0.76 four at a time (JAX's 0.63-0.66).
// The first call of 4 MiB or more in the process times both on its own rows, twice each in
// turn, and the faster is used from then on (extremes_row_order()); smaller calls before it take
// four rows at a time. Rows shorter than two vectors (15 float32s, 7 float64s) take neither: a
// vector of lanes holds one element of each of 8 (4) rows, gathered, and folds a column at a
// time (jnp.max over the last axis of (262144, 7): 0.74 -> 0.38 ms, JAX's 0.22-0.37).
void extremes_of_rows(bool maximum, const float* x, int64_t count, int64_t n, int64_t stride,
                      float* out);
void extremes_of_rows(bool maximum, const double* x, int64_t count, int64_t n, int64_t stride,
                      double* out);
// The order extremes_of_rows chose, once a call was large enough to choose (kUnknown before, and
// where the rows take the portable path), and extremes_of_rows in a given order (kUnknown: four
// at a time), for tests and benchmarks.
enum class RowOrder { kUnknown, kInterleaved, kSequential };
RowOrder extremes_row_order();
void extremes_of_rows_in(RowOrder order, bool maximum, const float* x, int64_t count, int64_t n,
                         int64_t stride, float* out);
void extremes_of_rows_in(RowOrder order, bool maximum, const double* x, int64_t count, int64_t n,
                         int64_t stride, double* out);

// acc[j] = max (or min) of acc[j] and row[j] for j < width, by the same rule. A NaN in either
// leaves acc[j] a NaN whose sign and payload are unspecified: canonicalise after the last row.
void fold_extremes(bool maximum, float* acc, const float* row, int64_t width);
void fold_extremes(bool maximum, double* acc, const double* row, int64_t width);

// fold_extremes of `count` rows in turn, row r at rows + r * stride: four rows per pass over acc,
// a quarter of its loads and stores.
void fold_extreme_rows(bool maximum, float* acc, const float* rows, int64_t count, int64_t stride,
                       int64_t width);
void fold_extreme_rows(bool maximum, double* acc, const double* rows, int64_t count, int64_t stride,
                       int64_t width);

// The index of the first maximum of x[0, n), n >= 1, as above.
int64_t first_max_of(const float* x, int64_t n);
int64_t first_max_of(const double* x, int64_t n);

// out[r] = first_max_of(x + r * stride, n) for r < count (rows of n >= 1 elements). Rows of up to
// 128 elements are compared a column at a time, one element of each of 8 float32 (4 float64)
// rows gathered into a vector, where a row at a time cost more (jnp.argmax over the last axis of
// 2^20 float32s: rows of 4 0.28 -> 0.24 ms, of 17 0.99 -> 0.19, of 64 0.49 -> 0.20; JAX's 0.14-2).
void first_max_of_rows(const float* x, int64_t count, int64_t n, int64_t stride, int32_t* out);
void first_max_of_rows(const double* x, int64_t count, int64_t n, int64_t stride, int32_t* out);

// Row `r` of a slab folded into a running argmax across rows: where row[j] is a NaN and best[j]
// is not, or row[j] > best[j], best[j] = row[j] and index[j] = r. Rows folded in order from
// best = row 0, index = 0 give every column's first maximum (the first NaN, if any).
void fold_first_max(float* best, int32_t* index, const float* row, int64_t width, int32_t r);
void fold_first_max(double* best, int32_t* index, const double* row, int64_t width, int32_t r);

// fold_first_max of `count` rows in turn, row k at rows + k * stride numbered first + k: the same
// result, four rows a pass over best and index (argmax down the leading axis read 24 GB/s one
// row a pass).
void fold_first_max_rows(float* best, int32_t* index, const float* rows, int64_t count,
                         int64_t stride, int64_t width, int32_t first);
void fold_first_max_rows(double* best, int32_t* index, const double* rows, int64_t count,
                         int64_t stride, int64_t width, int32_t first);

// The integer types' counterparts of fold_extreme_rows and fold_first_max (no NaN, no signed
// zeros: plain max, min and >), `acc`, `rows`, `best` and `row` holding `dtype`, which is any
// integer type (int8 to uint64). Plain loops built for x86-64-v3 and the baseline, as
// float_arithmetic.h's: Eigen's fold allocated a temporary per row and, compiled for SSE2, has
// no 32-bit integer max instruction (jnp.max over axis 0 of an int32 4096 x 2048 took 7.4-9.5
// ms, JAX's 2.0-2.7). False, with nothing written, for another dtype. fold_integer_rows takes
// four rows a pass over acc, and sum_integer_rows adds them the same way, modulo 2^bits as XLA's
// sums wrap (exact in any order; Eigen added a row at a time in SSE2's lanes): over an int32
// 4096 x 2048 on the Zen 5, jnp.max(a, 0) 1.24 -> 0.68 ms, jnp.sum(a, 0) 1.44 -> 0.68 (JAX
// 1.0-1.2). `acc` overlaps no row.
bool fold_integer_rows(bool maximum, DType dtype, std::byte* acc, const std::byte* rows,
                       int64_t count, int64_t stride, int64_t width);
bool sum_integer_rows(DType dtype, std::byte* acc, const std::byte* rows, int64_t count,
                      int64_t stride, int64_t width);
bool fold_integer_first_max(DType dtype, std::byte* best, int32_t* index, const std::byte* row,
                            int64_t width, int32_t r);
// *out = max (or min) of the n >= 1 integers of `dtype` at x, a plain loop built the same ways:
// Eigen's maxCoeff has no int8 or int16 packets and folded one element at a time (jnp.max along
// the rows of an int8 4096 x 2048 took 0.37-0.57 ms, JAX's 0.17-0.19). False, with nothing
// written, for another dtype.
bool integer_extreme_of(bool maximum, DType dtype, const std::byte* x, int64_t n, std::byte* out);

// The same functions in plain C++, one element at a time: the build a CPU without AVX2 runs,
// exposed so that tests compare the two on every machine.
namespace portable {
float extreme_of(bool maximum, const float* x, int64_t n);
double extreme_of(bool maximum, const double* x, int64_t n);
void fold_extremes(bool maximum, float* acc, const float* row, int64_t width);
void fold_extremes(bool maximum, double* acc, const double* row, int64_t width);
void fold_extreme_rows(bool maximum, float* acc, const float* rows, int64_t count, int64_t stride,
                       int64_t width);
void fold_extreme_rows(bool maximum, double* acc, const double* rows, int64_t count, int64_t stride,
                       int64_t width);
int64_t first_max_of(const float* x, int64_t n);
int64_t first_max_of(const double* x, int64_t n);
void fold_first_max(float* best, int32_t* index, const float* row, int64_t width, int32_t r);
void fold_first_max(double* best, int32_t* index, const double* row, int64_t width, int32_t r);
void fold_first_max_rows(float* best, int32_t* index, const float* rows, int64_t count,
                         int64_t stride, int64_t width, int32_t first);
void fold_first_max_rows(double* best, int32_t* index, const double* rows, int64_t count,
                         int64_t stride, int64_t width, int32_t first);
}  // namespace portable

}  // namespace spmd::kernels
