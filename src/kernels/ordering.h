// Kernels whose values depend on an order JAX takes from XLA's CPU programs, repeated here so that
// they equal JAX's bit for bit: a cumulative sum and product in the order XLA's reduce-window
// rewriter adds, jnp.searchsorted's binary search ('scan'), lax.top_k's indices, take (a gather
// along one axis) and a stable sort along an axis (jnp.sort, jnp.argsort, lax.sort_key_val). What
// jax.random.choice with probabilities is made of. Pure; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>

#include "spmd/dtype.h"
#include "spmd/shape.h"

namespace spmd::kernels {

// Whether cumsum, cumprod, search_sorted and top_k take `dtype`: 32- and 64-bit integers and
// floats.
bool orderable(DType dtype);

// The inclusive sum along `axis` of `in` (`shape`, row-major) at `out`. Floats add in XLA's CPU
// order (its ReduceWindowRewriter, base 16): a line of at most 16 elements from the first on; a
// longer one as rows of 16 (zero-padded), each row's running sum plus the exclusive running sum
// of the rows' totals, itself computed the same way. Requires orderable(dtype). Down a leading
// axis the columns are scanned side by side, 128 at a time, split over the team (each column
// with the same operations in the same order as alone).
void cumsum(DType dtype, const std::byte* in, const Shape& shape, int axis, std::byte* out);
// The inclusive product, in the same order as cumsum's sums (XLA rewrites both reduce-windows
// alike; the padding is ones).
void cumprod(DType dtype, const std::byte* in, const Shape& shape, int axis, std::byte* out);

// For each of `count` queries, the int32 index jnp.searchsorted(sorted, query) gives (side
// 'left', method 'scan'): ceil(log2(n + 1)) halvings of [0, n], comparing as JAX's sort does (-0
// equals 0, NaN after every number). For a sorted array, the first position whose element is not
// less than the query. Requires orderable(dtype) and n > 0. Queries are searched 16 side by side
// (their reads wait on memory together) and the team takes ranges of them.
void search_sorted(DType dtype, const std::byte* sorted, int64_t n, const std::byte* queries,
                   int64_t count, int32_t* out);

// The int32 indices of the k largest of n values, largest first, the lower index first among
// equal ones, NaN above every number (lax.top_k's). Requires orderable(dtype) and k <= n.
void top_k(DType dtype, const std::byte* in, int64_t n, int64_t k, int32_t* out);

// `in` (`shape`, elements of `element_size` bytes) at the `count` positions `indices` along
// `axis`, each clamped into 0 … shape[axis] - 1 as XLA's gather clamps: out has shape[axis]
// replaced by count (jnp.take). Requires shape[axis] > 0. The calling thread's team
// (thread_team.h) copies ranges of the rows. Indices n − 1, …, 0 (jnp.flip's) reverse each
// line's rows in one loop instead of a gather, the team splitting a line's rows where lines are
// fewer than its threads (a flat flip of 2^20 float32s: 0.53-0.57 -> 0.25-0.26 ms).
// With `fill` (one element), an index outside the axis gives a row of that element instead of
// being clamped (jnp.take's default mode in one pass: the gathered rows and a select over them
// were two, 0.73 ms against JAX's 0.47 for 4,096 rows of 1,024 float32s).
void take(size_t element_size, const std::byte* in, const Shape& shape, int axis,
          const int32_t* indices, int64_t count, std::byte* out, const std::byte* fill = nullptr);

// take's transpose, what its derivative sends back: out (`shape`, of float `dtype`) zeros, then
// for each of outer × count × inner update elements in row-major order, out at the position
// indices[i] along `axis` (clamped into the axis, as take clamps) += the update, each addition
// rounded to dtype (the half types through float32), in that order as XLA's scatter adds: a
// repeated index sums its updates in their order. `updates` has shape[axis] replaced by count.
// Requires a floating dtype and shape[axis] > 0.
void scatter_add(DType dtype, const std::byte* updates, const Shape& shape, int axis,
                 const int32_t* indices, int64_t count, std::byte* out);

// What sort() orders and what it writes: the lines of `shape` along `axis`, each sorted alone.
struct SortSpec {
  Shape shape;  // of the keys, the payload and the result
  int axis = 0;
  bool descending = false;
  // Bytes per payload element; 0 for none: the result is then int32 positions along the axis.
  size_t payload_size = 0;
};

// Sorts each line of `keys` (row-major, of key_dtype) by JAX's sort order (-0 equals 0, NaN after
// every number), stably, and writes at each place of the line either the payload element
// (`payload`, shaped as the keys) whose key the order puts there, or, with no payload, that key's
// int32 position along the axis. Among equal keys the earlier comes first, except descending with
// a payload, where the later does: that is lax.rev of the ascending order, as jnp.sort(...,
// descending=True) gives, while jnp.argsort(..., descending=True) keeps equal keys in their order.
// The payload may be the keys themselves (jnp.sort). Requires orderable(key_dtype) and lines of
// fewer than 2^31 elements. Each line is sorted by Highway's vqsort (libhwy-contrib) as distinct
// integers, its keys' order above their positions, and the team takes lines in turn: an int32
// 1024 × 1024 along its rows took 45 ms through std::sort of positions and a comparator, against
// JAX's 20; now 1.7-2.8 ms.
void sort(DType key_dtype, const std::byte* keys, const SortSpec& spec, const std::byte* payload,
          std::byte* out);

}  // namespace spmd::kernels
