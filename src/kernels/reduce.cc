#include "kernels/reduce.h"

#include <fmt/format.h>

#include <Eigen/Core>
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <memory>
#include <type_traits>
#include <vector>

#include "kernels/contiguous_sum.h"
#include "kernels/dispatch.h"
#include "kernels/elementwise.h"
#include "kernels/extremes.h"
#include "kernels/half_convert.h"
#include "kernels/thread_team.h"
#include "kernels/xla_sum.h"
#include "kernels/ynn_reduce.h"
#include "spmd/error.h"

namespace spmd::kernels {
namespace {

struct Extents {
  int64_t outer = 1, extent = 1, inner = 1;
};

Extents extents_of(const Shape& shape, int axis) {
  Extents e;
  for (int d = 0; d < axis; ++d) e.outer *= shape[static_cast<size_t>(d)];
  e.extent = shape[static_cast<size_t>(axis)];
  for (size_t d = static_cast<size_t>(axis) + 1; d < shape.size(); ++d) e.inner *= shape[d];
  return e;
}

template <class T>
using Row = Eigen::Map<Eigen::Array<T, 1, Eigen::Dynamic>>;
template <class T>
using ConstRow = Eigen::Map<const Eigen::Array<T, 1, Eigen::Dynamic>>;

// Part of one outer slab: `width` columns of `rows` rows, each row `stride` elements after the
// one before (the slab's inner extent); the columns are reduced, each alone.
template <class T>
struct Columns {
  const T* in;
  int64_t rows, width, stride;
  Columns rows_from(int64_t first, int64_t count) const {
    return {in + first * stride, count, width, stride};
  }
  // Rows summed in order before blocks combine pairwise: kSumBlock, or kContiguousBlock for one
  // contiguous column, added in contiguous_sum's interleaved partial sums.
  int64_t block() const;
};

// Rows summed in order per block, blocks combined pairwise: the rounding error of a sum of n
// grows as log(n / kSumBlock) + kSumBlock ulps rather than as n (a float32 sum of 2^22 times
// 0.1 was 4% low when summed in order).
constexpr int64_t kSumBlock = 128;
// A contiguous row's blocks: 4096 elements over contiguous_sum's 64 float32 (32 float64) lanes,
// the 64 (128) in-order adds per lane that 1024 elements over 16 (8) lanes made before.
constexpr int64_t kContiguousBlock = 4096;

template <class T>
int64_t Columns<T>::block() const {
  return width == 1 && stride == 1 ? kContiguousBlock : kSumBlock;
}

// A team splits a reduction only into parts of at least this many elements: fewer cost more in
// waking a helper than they save.
constexpr int64_t kPartElements = int64_t{1} << 15;

// out (width elements) = the in-order sum of c's rows (at most c.block()). Whole rows are added
// one after another, reading memory in order; a single contiguous column (width 1, stride 1) is
// contiguous_sum's lanes.
template <class T>
void sum_block(const Columns<T>& c, T* out) {
  if (c.width == 1 && c.stride == 1) {
    out[0] = contiguous_sum(c.in, c.rows);
    return;
  }
  Row<T> row(out, c.width);
  row = ConstRow<T>(c.in, c.width);
  auto at = [&](int64_t r) { return ConstRow<T>(c.in + r * c.stride, c.width); };
  int64_t r = 1;
  // Four rows per pass over `out`, added left to right: the order of one at a time, with a
  // quarter of the loads and stores of the accumulator.
  for (; r + 4 <= c.rows; r += 4) row = (((row + at(r)) + at(r + 1)) + at(r + 2)) + at(r + 3);
  for (; r < c.rows; ++r) row += at(r);
}

// Where sum_rows splits `rows`: the first half takes the larger half of the blocks, so that no
// half needs more levels of scratch than ceil(log2(blocks)).
int64_t first_half(int64_t rows, int64_t block) {
  const int64_t blocks = (rows + block - 1) / block;
  return (blocks + 1) / 2 * block;
}

// out = the sum of c's rows, blockwise and pairwise. `scratch` holds c.width elements per level
// of the recursion below this one.
template <class T>
void sum_rows(const Columns<T>& c, T* out, T* scratch) {
  if (c.rows <= c.block()) return sum_block(c, out);
  const int64_t first = first_half(c.rows, c.block());
  sum_rows(c.rows_from(0, first), out, scratch);
  sum_rows(c.rows_from(first, c.rows - first), scratch, scratch + c.width);
  Row<T>(out, c.width) += Row<T>(scratch, c.width);
}

int sum_levels(int64_t rows, int64_t block) {
  int levels = 0;
  for (int64_t blocks = (rows + block - 1) / block; blocks > 1; blocks = (blocks + 1) / 2) {
    ++levels;
  }
  return levels;
}

template <class T>
void sum_columns(const Columns<T>& c, T* out) {
  std::vector<T> scratch(static_cast<size_t>(sum_levels(c.rows, c.block()) * c.width));
  sum_rows(c, out, scratch.data());
}

// The row ranges (first, count) of sum_rows's recursion over rows [first, first + count)
// `depth` levels down (fewer where a range is one block), left to right.
void row_subtrees(int64_t first, int64_t count, int64_t block, int depth,
                  std::vector<std::pair<int64_t, int64_t>>& out) {
  if (depth == 0 || count <= block) return out.push_back({first, count});
  const int64_t half = first_half(count, block);
  row_subtrees(first, half, block, depth - 1, out);
  row_subtrees(first + half, count - half, block, depth - 1, out);
}

// Adds up the sums of row_subtrees's ranges (each `width` elements, in `sums`, left to right from
// `next`) as sum_rows's recursion adds them, into the first's row; returns it.
template <class T>
T* combine(int64_t count, int64_t block, int depth, int64_t width, std::vector<T>& sums,
           size_t& next) {
  if (depth == 0 || count <= block) return sums.data() + width * static_cast<int64_t>(next++);
  const int64_t half = first_half(count, block);
  T* left = combine(half, block, depth - 1, width, sums, next);
  const T* right = combine(count - half, block, depth - 1, width, sums, next);
  Row<T>(left, width) += ConstRow<T>(right, width);
  return left;
}

// The depth of the pairwise tree whose subtrees give each of the team's threads one or more.
int team_depth() {
  int depth = 0;
  while ((1 << depth) < team_size()) ++depth;
  return depth;
}

// sum_columns with the recursion's top levels on the team's threads: the same additions in the
// same order, so the same value, whatever the team's size.
template <class T>
void sum_columns_split(const Columns<T>& c, T* out) {
  const int depth = team_depth();
  std::vector<std::pair<int64_t, int64_t>> ranges;
  row_subtrees(0, c.rows, c.block(), depth, ranges);
  std::vector<T> sums(ranges.size() * static_cast<size_t>(c.width));
  parallel_for(static_cast<int64_t>(ranges.size()), 1, 1, [&](int64_t first, int64_t last) {
    for (int64_t p = first; p < last; ++p) {
      const auto [from, count] = ranges[static_cast<size_t>(p)];
      sum_columns(c.rows_from(from, count), sums.data() + p * c.width);
    }
  });
  size_t next = 0;
  const T* total = combine(c.rows, c.block(), depth, c.width, sums, next);
  std::copy_n(total, c.width, out);
}

// The type a product of T is computed in: T for floats, an unsigned type of at least 32 bits for
// integers, so that they wrap (as XLA's and jnp.prod's do) without signed overflow.
template <class T, bool = std::is_integral_v<T>>
struct MultipliedAs {
  using type = T;
};
template <class T>
struct MultipliedAs<T, true> {
  using type = std::conditional_t<(sizeof(T) < 4), uint32_t, std::make_unsigned_t<T>>;
};
template <class T>
using Multiplied = typename MultipliedAs<T>::type;

// acc[j] *= row[j] for j < n, each product rounded (floats) or wrapped (integers).
template <class T>
void multiply_into(T* acc, const T* row, int64_t n) {
  using M = Multiplied<T>;
  for (int64_t j = 0; j < n; ++j) acc[j] = static_cast<T>(M(acc[j]) * M(row[j]));
}

// multiply_into of `count` rows in turn, row r at rows + r * stride: four rows per pass over acc
// (the same products in the same order, left to right; integers wrap alike whether truncated
// after each product or once), a quarter of its loads and stores.
template <class T>
void multiply_rows(T* acc, const T* rows, int64_t count, int64_t stride, int64_t width) {
  using M = Multiplied<T>;
  int64_t r = 0;
  for (; r + 4 <= count; r += 4) {
    const T *a = rows + r * stride, *b = a + stride, *c = b + stride, *d = c + stride;
    for (int64_t j = 0; j < width; ++j) {
      acc[j] = static_cast<T>(M(acc[j]) * M(a[j]) * M(b[j]) * M(c[j]) * M(d[j]));
    }
  }
  for (; r < count; ++r) multiply_into(acc, rows + r * stride, width);
}

// The product of x[0, n), n <= kProductChunk, in 32 lanes (lane l takes elements l, l + 32, …),
// the lanes then multiplied in order, then the tail: an order set by n alone (Eigen's prod()
// starts its lanes where the data is aligned), vectorised by the compiler. Integers wrap as
// multiply_into's.
constexpr int64_t kProductChunk = int64_t{1} << 16;

template <class T>
T lanes_product(const T* x, int64_t n) {
  using M = Multiplied<T>;
  constexpr int64_t kLanes = 32;
  M lanes[kLanes];
  std::fill_n(lanes, kLanes, M(1));
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int64_t l = 0; l < kLanes; ++l) lanes[l] *= M(x[i + l]);
  }
  M total(1);
  for (int64_t l = 0; l < kLanes; ++l) total *= lanes[l];
  for (; i < n; ++i) total *= M(x[i]);
  return static_cast<T>(total);
}

// The product of a contiguous row: the products of its chunks of kProductChunk (lanes_product),
// multiplied in order; the chunks on the calling thread's team where there are several (the
// same products in the same order, so the same value on any team).
template <class T>
T contiguous_product(const T* x, int64_t n) {
  if (n <= kProductChunk) return lanes_product(x, n);
  const int64_t chunks = (n + kProductChunk - 1) / kProductChunk;
  std::vector<T> parts(static_cast<size_t>(chunks));
  parallel_for(chunks, 1, 1, [&](int64_t first, int64_t last) {
    for (int64_t c = first; c < last; ++c) {
      const int64_t at = c * kProductChunk;
      parts[static_cast<size_t>(c)] = lanes_product(x + at, std::min(kProductChunk, n - at));
    }
  });
  Multiplied<T> total(1);
  for (const T& p : parts) total *= Multiplied<T>(p);
  return static_cast<T>(total);
}

// row = op(row, next), element by element: logical any/all for bool (a product is all), max/min
// (NaN wins, as jnp.max's), a sum or a product.
template <class T>
void fold_row(Reduce op, Row<T>& row, const ConstRow<T>& next) {
  if constexpr (std::is_same_v<T, bool>) {
    const bool all = op == Reduce::kMin || op == Reduce::kProd;
    row = all ? (row && next).eval() : (row || next).eval();
  } else if (op == Reduce::kSum) {
    row += next;
  } else if (op == Reduce::kProd) {
    multiply_into(row.data(), next.data(), row.size());
  } else if constexpr (std::is_floating_point_v<T>) {  // extremes.h: NaN wins, +0 over -0
    fold_extremes(op == Reduce::kMax, row.data(), next.data(), row.size());
  } else {
    row = op == Reduce::kMax ? row.max(next).eval() : row.min(next).eval();
  }
}

// After the last fold_row: one NaN for every NaN of a float max or min.
template <class T>
void finish_fold(Reduce op, Row<T>& row) {
  if constexpr (std::is_floating_point_v<T>) {
    if (op == Reduce::kMax || op == Reduce::kMin) row = row.isNaN().select(T(NAN), row);
  }
}

// out = the sum of c's integer rows (exact in any order, wrapping), four rows a pass
// (extremes.h's sum_integer_rows; bool has no sum here).
template <class T>
void fold_integer_sum(const Columns<T>& c, T* out) {
  std::copy_n(c.in, c.width, out);
  if (c.rows > 1) {
    sum_integer_rows(dtype_of<T>(), reinterpret_cast<std::byte*>(out),
                     reinterpret_cast<const std::byte*>(c.in + c.stride), c.rows - 1, c.stride,
                     c.width);
  }
}

// out (width elements) = op over c's rows, in order: logical any/all for bool, max/min (NaN
// wins, as jnp.max's), an integer sum (exact in any order) or a product (row by row, in order).
template <class T>
void fold_columns(Reduce op, const Columns<T>& c, T* out) {
  if constexpr (!std::is_same_v<T, bool>) {
    if (std::is_integral_v<T> && op == Reduce::kSum) return fold_integer_sum(c, out);
    // The running extremes (products) kept 2 KiB away from the rows' addresses modulo 4 KiB:
    // where they coincided, every load of a row waited on the store to the same columns of `out`
    // before it (4K aliasing), and jnp.max over 4096 x 2048 took 4.2 ms one call and 1.7 the next.
    constexpr int64_t kPad = 4096 / sizeof(T);
    std::vector<T> buffer(static_cast<size_t>(c.width + kPad));
    const auto apart =
        (reinterpret_cast<uintptr_t>(c.in) + 2048 - reinterpret_cast<uintptr_t>(buffer.data())) %
        4096 / sizeof(T);
    T* acc = buffer.data() + apart;
    std::copy_n(c.in, c.width, acc);
    if (op == Reduce::kProd) {
      multiply_rows(acc, c.in + c.stride, c.rows - 1, c.stride, c.width);
    } else if constexpr (std::is_floating_point_v<T>) {
      fold_extreme_rows(op == Reduce::kMax, acc, c.in + c.stride, c.rows - 1, c.stride, c.width);
      Row<T> row(acc, c.width);
      finish_fold(op, row);
    } else {  // extremes.h's integer loops
      fold_integer_rows(op == Reduce::kMax, dtype_of<T>(), reinterpret_cast<std::byte*>(acc),
                        reinterpret_cast<const std::byte*>(c.in + c.stride), c.rows - 1, c.stride,
                        c.width);
    }
    std::copy_n(acc, c.width, out);
    return;
  }
  Row<T> row(out, c.width);
  row = ConstRow<T>(c.in, c.width);
  for (int64_t r = 1; r < c.rows; ++r) fold_row(op, row, ConstRow<T>(c.in + r * c.stride, c.width));
}

// Made rows are reduced in slabs of at most kMadeColumns columns, each row made kMadePiece
// columns at a time: a made piece stays in the L1 cache while it is added to the slab's sums (in
// L2, with the pairwise tree's scratch), and each row's slab is read in memory order, long
// enough for the prefetcher to follow (rows made 1024 columns at a time, one slab after another,
// ran 1.7x slower: each row's piece began a new page).
constexpr int64_t kMadeColumns = 16384;
constexpr int64_t kMadePiece = 1024;

// Rows [first_row, first_row + rows) of an array made on demand, columns [first, last), with a
// buffer (`piece`) for kMadePiece made columns: reduce_made_rows's counterpart of Columns.
template <class T>
struct MadeColumns {
  const MakeRow* make;
  int64_t first_row, rows, first, last;
  T* piece;
  int64_t width() const { return last - first; }
  MadeColumns rows_from(int64_t start, int64_t count) const {
    return {make, first_row + start, count, first, last, piece};
  }
  void make_row(int64_t r, T* dst) const {
    (*make)(first_row + r, first, last, reinterpret_cast<std::byte*>(dst));
  }
  // Row r made a piece at a time, each piece folded into the same columns of `into` by
  // fold(into's columns, the piece).
  template <class F>
  void fold_row_into(int64_t r, T* into, F fold) const {
    for (int64_t c = first; c < last; c += kMadePiece) {
      const int64_t stop = std::min(last, c + kMadePiece);
      (*make)(first_row + r, c, stop, reinterpret_cast<std::byte*>(piece));
      Row<T> columns(into + (c - first), stop - c);
      fold(columns, ConstRow<T>(piece, stop - c));
    }
  }
};

// sum_block's additions over made rows: the first row, then each next one added in order.
template <class T>
void sum_made_block(const MadeColumns<T>& m, T* out) {
  m.make_row(0, out);
  for (int64_t r = 1; r < m.rows; ++r) {
    m.fold_row_into(r, out, [](Row<T>& sum, const ConstRow<T>& next) { sum += next; });
  }
}

// sum_rows's recursion over made rows (blocks of kSumBlock: a made array is never one contiguous
// column).
template <class T>
void sum_made(const MadeColumns<T>& m, T* out, T* scratch) {
  if (m.rows <= kSumBlock) return sum_made_block(m, out);
  const int64_t first = first_half(m.rows, kSumBlock);
  sum_made(m.rows_from(0, first), out, scratch);
  sum_made(m.rows_from(first, m.rows - first), scratch, scratch + m.width());
  Row<T>(out, m.width()) += Row<T>(scratch, m.width());
}

template <class T>
void reduce_made(Reduce op, const MadeColumns<T>& m, T* out) {
  if (op == Reduce::kSum) {
    std::vector<T> scratch(static_cast<size_t>(sum_levels(m.rows, kSumBlock) * m.width()));
    return sum_made(m, out, scratch.data());
  }
  m.make_row(0, out);
  for (int64_t r = 1; r < m.rows; ++r) {
    m.fold_row_into(r, out,
                    [op](Row<T>& row, const ConstRow<T>& next) { fold_row(op, row, next); });
  }
  Row<T> row(out, m.width());
  finish_fold(op, row);
}

// Rows [first_row, first_row + rows), columns [first, last) made by `make`, reduced into out.
template <class T>
void reduce_made_part(Reduce op, const MakeRow& make, int64_t first_row, int64_t rows,
                      int64_t first, int64_t last, T* out) {
  std::vector<T> piece(static_cast<size_t>(std::min(kMadePiece, last - first)));
  for (int64_t c = first; c < last; c += kMadeColumns) {
    const int64_t stop = std::min(last, c + kMadeColumns);
    reduce_made(op, MadeColumns<T>{&make, first_row, rows, c, stop, piece.data()},
                out + (c - first));
  }
}

// reduce_made_rows: the team takes the top of the rows' tree where there is more than one block
// (each thread makes whole rows, in memory order), else ranges of columns, else one thread does
// all. Max and min fold the parts' results (extremes.h: the order does not change them).
template <class T>
void reduce_made_typed(Reduce op, int64_t rows, int64_t width, const MakeRows& makers, T* out) {
  // A product's rows are not split: products of parts would round as the team's size says.
  if (team_size() > 1 && rows > kSumBlock && op != Reduce::kProd) {
    const int depth = team_depth();
    std::vector<std::pair<int64_t, int64_t>> ranges;
    row_subtrees(0, rows, kSumBlock, depth, ranges);
    std::vector<T> parts(ranges.size() * static_cast<size_t>(width));
    parallel_for(static_cast<int64_t>(ranges.size()), 1, 1, [&](int64_t first, int64_t last) {
      const MakeRow make = makers();
      for (int64_t p = first; p < last; ++p) {
        const auto [from, count] = ranges[static_cast<size_t>(p)];
        reduce_made_part(op, make, from, count, 0, width, parts.data() + p * width);
      }
    });
    Row<T> total(out, width);
    if (op == Reduce::kSum) {
      size_t next = 0;
      total = Row<T>(combine(rows, kSumBlock, depth, width, parts, next), width);
      return;
    }
    total = Row<T>(parts.data(), width);
    for (size_t p = 1; p < ranges.size(); ++p) {
      fold_row(op, total, ConstRow<T>(parts.data() + p * static_cast<size_t>(width), width));
    }
    finish_fold(op, total);
    return;
  }
  parallel_for(width, std::max<int64_t>(16, kPartElements / rows), 16,
               [&](int64_t first, int64_t last) {
                 reduce_made_part(op, makers(), 0, rows, first, last, out + first);
               });
}

// One contiguous column (the reduced axis is the innermost): Eigen's vectorised reductions.
template <class T>
T fold_contiguous(Reduce op, const T* in, int64_t n) {
  const Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>> x(in, n);
  if constexpr (std::is_same_v<T, bool>) {
    return op == Reduce::kMin || op == Reduce::kProd ? x.all() : x.any();
  } else {
    if (op == Reduce::kSum) return x.sum();
    if (op == Reduce::kProd) return contiguous_product(in, n);
    if constexpr (std::is_floating_point_v<T>) {
      return extreme_of(op == Reduce::kMax, in, n);
    } else {  // extremes.h's integer loop (n >= 1: an empty axis was refused before)
      T best{};
      integer_extreme_of(op == Reduce::kMax, dtype_of<T>(), reinterpret_cast<const std::byte*>(in),
                         n, reinterpret_cast<std::byte*>(&best));
      return best;
    }
  }
}

template <class T>
void reduce_columns(Reduce op, const Columns<T>& c, T* out) {
  if constexpr (std::is_floating_point_v<T>) {
    if (op == Reduce::kSum) return sum_columns(c, out);
  }
  if (c.width == 1 && c.stride == 1) {
    out[0] = fold_contiguous(op, c.in, c.rows);
    return;
  }
  fold_columns(op, c, out);
}

// Integer sums, maxima and minima of many short contiguous rows (inner 1, extent at most
// kShortRow): one loop over the rows, each row's elements folded in order (any order gives the
// same integer; sums wrap). A call per row cost more than its few additions: an int32 sum over
// the last axis of (1024, 1024, 4) took 2.2 ms, JAX's 0.41. False for another case.
constexpr int64_t kShortRow = 64;
template <class T>
bool reduce_short_rows(Reduce op, const T* in, int64_t first, int64_t last, int64_t extent,
                       T* out) {
  if constexpr (!std::is_integral_v<T> || std::is_same_v<T, bool>) {
    return false;
  } else {
    if (extent < 1 || extent > kShortRow || op == Reduce::kProd) return false;
    using W = std::conditional_t<(sizeof(T) < 4), uint32_t, std::make_unsigned_t<T>>;
    const auto fold = [&](auto f) {
      for (int64_t o = first; o < last; ++o) {
        const T* row = in + o * extent;
        T acc = row[0];
        for (int64_t j = 1; j < extent; ++j) acc = f(acc, row[j]);
        out[o] = acc;
      }
    };
    if (op == Reduce::kSum) {
      fold([](T a, T b) { return static_cast<T>(W(a) + W(b)); });
    } else if (op == Reduce::kMax) {
      fold([](T a, T b) { return std::max(a, b); });
    } else {
      fold([](T a, T b) { return std::min(a, b); });
    }
    return true;
  }
}

// A float sum over a slab of at least kRowSplitRows rows takes the top levels of its pairwise tree
// on the team (each thread adding whole rows in memory order), not ranges of its columns: the
// same additions, so the same value, and faster at every width measured. jnp.sum(a, 0) of float32
// on the 2-core Zen 5, column shares over row halves: 4096 x 2048 1.11x the time, 8192 x 1024
// 1.32x, 2048 x 512 1.27x, 512 x 16384 1.05x, 256 x 262144 0.99x. (Maxima and minima,
// fold_extreme_rows, took the same time either way, so they keep the column shares.)
constexpr int64_t kRowSplitRows = 2 * kSumBlock;

template <class T>
bool sum_split_by_rows(Reduce op, const Extents& e) {
  return std::is_floating_point_v<T> && op == Reduce::kSum && team_size() >= 2 &&
         e.extent >= kRowSplitRows;
}

// Each outer slab reduced over its rows, the team taking whole slabs where there are enough of
// them, else (a float sum of many rows, sum_split_by_rows, or of few, long columns) the top of
// the pairwise tree, else ranges of a slab's columns. Every output element is computed in the
// serial kernel's order.
template <class T>
void reduce_typed(Reduce op, const T* in, Extents e, T* out) {
  const int64_t slab = e.extent * e.inner;
  auto columns = [&](int64_t o, int64_t first, int64_t last) {
    return Columns<T>{in + o * slab + first, e.extent, last - first, e.inner};
  };
  if (e.outer >= team_size() || e.outer * slab < 2 * kPartElements) {
    const int64_t grain = std::max<int64_t>(1, kPartElements / std::max<int64_t>(slab, 1));
    parallel_for(e.outer, grain, 1, [&](int64_t first, int64_t last) {
      if constexpr (std::is_floating_point_v<T>) {
        // Contiguous rows' maxima or minima, several rows read at once (extremes.h).
        if ((op == Reduce::kMax || op == Reduce::kMin) && e.inner == 1 && e.extent > 0) {
          extremes_of_rows(op == Reduce::kMax, in + first * slab, last - first, e.extent, slab,
                           out + first);
          return;
        }
      }
      if (e.inner == 1 && reduce_short_rows(op, in, first, last, e.extent, out)) return;
      for (int64_t o = first; o < last; ++o)
        reduce_columns(op, columns(o, 0, e.inner), out + o * e.inner);
    });
    return;
  }
  for (int64_t o = 0; o < e.outer; ++o) {
    if (e.inner >= int64_t{16} * team_size() && !sum_split_by_rows<T>(op, e)) {
      const int64_t grain = std::max<int64_t>(16, kPartElements / std::max<int64_t>(e.extent, 1));
      parallel_for(e.inner, grain, 16, [&](int64_t first, int64_t last) {
        reduce_columns(op, columns(o, first, last), out + o * e.inner + first);
      });
      continue;
    }
    bool split = false;
    if constexpr (std::is_floating_point_v<T>) {
      if (op == Reduce::kSum) {
        sum_columns_split(columns(o, 0, e.inner), out + o * e.inner);
        split = true;
      }
    }
    if (!split) reduce_columns(op, columns(o, 0, e.inner), out + o * e.inner);
  }
}

// A float16 or bfloat16 array reduced in float32 (into `out`, float32) without a float32 copy of
// it: contiguous rows widened one at a time into each part's own buffer, or, with more than one
// element after the axis, each outer slab's rows widened a piece at a time as reduce_made_typed
// makes them. The same reductions of the same float32 values in the same order as reduce_typed
// over a whole widened copy, so the same bits. False where neither fits (a few long rows, many
// small slabs): the caller widens the whole array. A 32 MiB copy made per call cost more in page
// faults than the reduction (jnp.max over a float16 4096 x 2048: 20 ms, 26 of them in the kernel
// per call across both cores).
bool reduce_half_in_pieces(Reduce op, DType dtype, const std::byte* in, Extents e, float* out) {
  const auto size = static_cast<int64_t>(dtype_size(dtype));
  const int64_t slab = e.extent * e.inner;
  if (e.inner == 1 && (e.outer >= team_size() || e.outer * slab < 2 * kPartElements)) {
    const int64_t grain = std::max<int64_t>(1, kPartElements / slab);
    // A bfloat16 row that contiguous_sum sums whole (one block) needs no widened copy.
    const bool bfloat16_row_sum =
        op == Reduce::kSum && dtype == DType::kBFloat16 && e.extent <= kContiguousBlock;
    parallel_for(e.outer, grain, 1, [&](int64_t first, int64_t last) {
      std::vector<float> row(bfloat16_row_sum ? 0 : static_cast<size_t>(e.extent));
      for (int64_t o = first; o < last; ++o) {
        if (bfloat16_row_sum) {  // widened as read: the same lanes, so the same bits
          out[o] = contiguous_sum_bfloat16(reinterpret_cast<const uint16_t*>(in + o * slab * size),
                                           e.extent);
          continue;
        }
        widen_half(dtype, in + o * slab * size, row.data(), e.extent);
        reduce_columns(op, Columns<float>{row.data(), e.extent, 1, 1}, out + o);
      }
    });
    return true;
  }
  if (e.inner == 1 || slab < kPartElements) return false;
  for (int64_t o = 0; o < e.outer; ++o) {
    const std::byte* base = in + o * slab * size;
    const MakeRows makers = [&, base] {
      return MakeRow([&, base](int64_t row, int64_t first, int64_t last, std::byte* dst) {
        widen_half(dtype, base + (row * e.inner + first) * size, reinterpret_cast<float*>(dst),
                   last - first);
      });
    };
    reduce_made_typed<float>(op, e.extent, e.inner, makers, out + o * e.inner);
  }
  return true;
}

// convert() over n elements, ranges of them on the team's threads (the same values).
void convert_split(DType from, DType to, const std::byte* in, std::byte* out, int64_t n) {
  const auto in_size = static_cast<int64_t>(dtype_size(from));
  const auto out_size = static_cast<int64_t>(dtype_size(to));
  parallel_for(n, kPartElements, 64, [&](int64_t begin, int64_t end) {
    convert(from, to, {in + begin * in_size, end - begin}, out + begin * out_size, end - begin);
  });
}

// Elements of an array read in place, or of a float16 or bfloat16 array widened (exactly) to
// float32 a run at a time into the caller's buffer.
template <class T>
struct FloatReader {
  const std::byte* in;
  DType dtype;
  bool widens() const { return is_half_dtype(dtype); }
  // Elements [at, at + n), valid until `scratch` (n elements where widens()) is written again.
  const T* read(int64_t at, int64_t n, T* scratch) const {
    if constexpr (std::is_same_v<T, float>) {
      if (widens()) {
        widen_half(dtype, in + at * static_cast<int64_t>(dtype_size(dtype)), scratch, n);
        return scratch;
      }
    }
    return reinterpret_cast<const T*>(in) + at;
  }
};

// The first maximum along a contiguous row, and a row folded into running first maxima
// (extremes.h for floats; for integers, extremes.h's vectorised maximum and then the first
// element equal to it, two passes that each outrun Eigen's maxCoeff(&index), one element at a
// time).
template <class T>
int64_t first_max_in(const T* x, int64_t n) {
  if constexpr (std::is_floating_point_v<T>) {
    return first_max_of(x, n);
  } else {
    T best{};
    integer_extreme_of(true, dtype_of<T>(), reinterpret_cast<const std::byte*>(x), n,
                       reinterpret_cast<std::byte*>(&best));
    return std::find(x, x + n, best) - x;
  }
}

// Rows of up to this many elements take no call a row: integers the loops below, half types
// widened a part at a time for first_max_of_rows (extremes.h). A call of first_max_in a row cost
// more than the row: argmax over the last axis of (2^18, 4) float32 took 1.8 ms, JAX's 0.2.
constexpr int64_t kShortArgmaxRow = 16;

// Integer rows of one length K, without branches, so that the loop over rows runs in vector
// lanes across them (int32 rows of 4: 0.97 → 0.08 ms for 2^18 rows, JAX 0.11-0.16). Floats take
// extremes.h's first_max_of_rows, which gathers their columns (GCC left their NaN test scalar in
// this form: 0.74 ms against first_max_short's 0.38).
template <class T, int K>
void first_max_rows(const T* x, int64_t rows, int32_t* out) {
  static_assert(std::is_integral_v<T>);
  for (int64_t r = 0; r < rows; ++r) {
    const T* row = x + r * K;
    T value = row[0];
    int32_t best = 0;
    for (int j = 1; j < K; ++j) {
      const bool above = row[j] > value;
      value = above ? row[j] : value;
      best = above ? j : best;
    }
    out[r] = best;
  }
}

// Integer rows of other short lengths, one at a time (floats take first_max_of_rows).
template <class T>
int32_t first_max_short(const T* x, int64_t n) {
  static_assert(std::is_integral_v<T>);
  int32_t best = 0;
  T value = x[0];
  for (int64_t j = 1; j < n; ++j) {
    if (x[j] > value) {
      value = x[j];
      best = static_cast<int32_t>(j);
    }
  }
  return best;
}

template <class T>
void fold_first_max_in(T* best, int32_t* index, const T* row, int64_t width, int32_t r) {
  if constexpr (std::is_floating_point_v<T>) {
    fold_first_max(best, index, row, width, r);
  } else {
    fold_integer_first_max(dtype_of<T>(), reinterpret_cast<std::byte*>(best), index,
                           reinterpret_cast<const std::byte*>(row), width, r);
  }
}

// argmax over contiguous rows (inner == 1): whole rows per thread. Else each outer slab's columns
// in chunks, each chunk's rows folded in memory order (extremes.h's fold_first_max) while its
// running maxima stay in the L1 cache.
template <class T>
void argmax_along(FloatReader<T> x, Extents e, int32_t* result) {
  if (e.inner == 1) {
    const int64_t grain = std::max<int64_t>(1, kPartElements / e.extent);
    parallel_for(e.outer, grain, 1, [&](int64_t first, int64_t last) {
      std::vector<T> scratch(x.widens() ? static_cast<size_t>(e.extent) : 0);
      if constexpr (std::is_integral_v<T>) {  // integers are read in place, never widened
        const T* rows = x.read(first * e.extent, (last - first) * e.extent, nullptr);
        if (visit_short_row(e.extent, [&](auto length) {
              first_max_rows<T, length()>(rows, last - first, result + first);
            })) {
          return;
        }
      }
      if constexpr (std::is_floating_point_v<T>) {
        if (!x.widens() || e.extent <= kShortArgmaxRow) {  // the part's rows at once
          std::vector<T> rows(x.widens() ? static_cast<size_t>((last - first) * e.extent) : 0);
          const T* all = x.read(first * e.extent, (last - first) * e.extent, rows.data());
          first_max_of_rows(all, last - first, e.extent, e.extent, result + first);
          return;
        }
      }
      for (int64_t o = first; o < last; ++o) {
        const T* row = x.read(o * e.extent, e.extent, scratch.data());
        if constexpr (std::is_integral_v<T>) {
          if (e.extent <= kShortArgmaxRow) {
            result[o] = first_max_short(row, e.extent);
            continue;
          }
        }
        result[o] = static_cast<int32_t>(first_max_in(row, e.extent));
      }
    });
    return;
  }
  constexpr int64_t kChunk = 2048;
  const int64_t split = (e.inner + team_size() - 1) / team_size();
  const int64_t chunk = std::clamp<int64_t>((split + 15) / 16 * 16, 16, kChunk);
  const int64_t chunks = (e.inner + chunk - 1) / chunk;
  const int64_t grain = std::max<int64_t>(1, kPartElements / (e.extent * chunk));
  parallel_for(e.outer * chunks, grain, 1, [&](int64_t first, int64_t last) {
    std::vector<T> best(static_cast<size_t>(chunk));
    std::vector<T> scratch(x.widens() ? static_cast<size_t>(chunk) : 0);
    for (int64_t item = first; item < last; ++item) {
      const int64_t o = item / chunks, column = item % chunks * chunk;
      const int64_t width = std::min(chunk, e.inner - column);
      const int64_t base = o * e.extent * e.inner + column;
      int32_t* index = result + o * e.inner + column;
      std::copy_n(x.read(base, width, scratch.data()), width, best.data());
      std::fill_n(index, width, 0);
      if constexpr (std::is_floating_point_v<T>) {
        if (!x.widens() && e.extent > 1) {  // the rows in place, several a pass
          fold_first_max_rows(best.data(), index, x.read(base + e.inner, width, nullptr),
                              e.extent - 1, e.inner, width, 1);
          continue;
        }
      }
      for (int64_t r = 1; r < e.extent; ++r) {
        fold_first_max_in(best.data(), index, x.read(base + r * e.inner, width, scratch.data()),
                          width, static_cast<int32_t>(r));
      }
    }
  });
}

// float32 sums of `rows` contiguous rows of `extent` elements in XLA's order (xla_sum.h), the
// team taking ranges of rows; each row's sum is one thread's. `input_rows`: the rows of the
// whole reduction, whose size decides the order.
void xla_row_sums(const float* in, int64_t rows, int64_t extent, int64_t input_rows, float* out) {
  const bool ynn = input_rows * extent >= kYnnReduceElements;
  parallel_for(
      rows, std::max<int64_t>(1, kPartElements / std::max<int64_t>(extent, 1)), 1,
      [&](int64_t first, int64_t last) {
        if (ynn && ynn_short_row_sums(in + first * extent, last - first, extent, out + first)) {
          return;
        }
        for (int64_t r = first; r < last; ++r) {
          out[r] = xla_row_sum(in + r * extent, extent, input_rows * extent);
        }
      });
}

// A float16 or bfloat16 array's rows summed as xla_row_sums sums their float32 values (jnp.sum of
// a half array: the float32 sum of its values), the sums rounded to `out_dtype` (float32 or the
// half type) at the end. In YNNPACK's order the halves are widened in registers as they are
// added (ynn_half_row_sum: one pass over the row, where widening it into a buffer first took two;
// bfloat16 4096 x 2048 0.25 -> 0.2 ms); else each row is widened into its part's buffer.
void xla_half_row_sums(DType dtype, const std::byte* in, int64_t rows, int64_t extent,
                       DType out_dtype, std::byte* out) {
  const auto size = static_cast<int64_t>(dtype_size(dtype));
  std::vector<float> sums(static_cast<size_t>(rows));
  const bool ynn = rows * extent >= kYnnReduceElements;
  parallel_for(rows, std::max<int64_t>(1, kPartElements / std::max<int64_t>(extent, 1)), 1,
               [&](int64_t first, int64_t last) {
                 std::vector<float> row;
                 // Short rows widened a part at a time and summed many rows a pass, the bits
                 // of widening each row first (ynn_short_row_sums): one call a row made float16
                 // rows of 4 5.7× slower than JAX's.
                 if (ynn && extent <= kYnnShortRow) {
                   row.resize(static_cast<size_t>((last - first) * extent));
                   widen_half(dtype, in + first * extent * size, row.data(),
                              (last - first) * extent);
                   if (ynn_short_row_sums(row.data(), last - first, extent, sums.data() + first)) {
                     return;
                   }
                 }
                 for (int64_t r = first; r < last; ++r) {
                   const std::byte* half_row = in + r * extent * size;
                   if (rows * extent >= kYnnReduceElements &&
                       ynn_half_row_sum(dtype, half_row, extent, &sums[static_cast<size_t>(r)])) {
                     continue;
                   }
                   row.resize(static_cast<size_t>(extent));
                   widen_half(dtype, half_row, row.data(), extent);
                   sums[static_cast<size_t>(r)] = xla_row_sum(row.data(), extent, rows * extent);
                 }
               });
  if (out_dtype == DType::kFloat32) {
    std::copy(sums.begin(), sums.end(), reinterpret_cast<float*>(out));
  } else {
    from_wide(out_dtype, sums, out);
  }
}

// Whether a reduction sums float32 rows in XLA's order rather than reduce_typed's.
bool xla_ordered_sum(Reduce op, DType dtype, DType out_dtype, int64_t inner, int64_t extent) {
  return op == Reduce::kSum && dtype == DType::kFloat32 && out_dtype == DType::kFloat32 &&
         inner == 1 && sums_in_xla_order(extent);
}

}  // namespace

std::string_view name(Reduce op) {
  constexpr std::string_view names[] = {"sum", "max", "min", "prod"};
  return names[static_cast<int>(op)];
}

int merged_trailing_axes(Reduce op, DType dtype, DType out_dtype, const Shape& shape,
                         std::span<const int64_t> axes) {
  if (op != Reduce::kSum || dtype != DType::kFloat32 || out_dtype != DType::kFloat32) return 0;
  int64_t total = 1;
  for (const int64_t d : shape) total *= d;
  if (total < kYnnReduceElements) return 0;
  const auto rank = static_cast<int64_t>(shape.size());
  int merged = 0;
  int64_t row = 1;
  for (auto it = axes.rbegin(); it != axes.rend() && *it == rank - 1 - merged; ++it) {
    if (row * shape[static_cast<size_t>(*it)] > kXlaSumRowLimit) break;
    row *= shape[static_cast<size_t>(*it)];
    ++merged;
  }
  return merged;
}

void reduce(Reduce op, DType dtype, const std::byte* in, const Shape& shape, int axis,
            DType out_dtype, std::byte* out) {
  const Extents e = extents_of(shape, axis);
  if (e.extent == 0 && (op == Reduce::kMax || op == Reduce::kMin)) {
    throw InvalidArgument(
        fmt::format("{} over an empty axis: a reduction with no identity", name(op)));
  }
  if (e.extent == 0) {  // the identity in every dtype: an empty sum is 0, an empty product 1
    const std::vector<double> identity(static_cast<size_t>(e.outer * e.inner),
                                       op == Reduce::kProd ? 1.0 : 0.0);
    const auto count = static_cast<int64_t>(identity.size());
    convert(DType::kFloat64, out_dtype,
            {reinterpret_cast<const std::byte*>(identity.data()), count}, out, count);
    return;
  }
  if (xla_ordered_sum(op, dtype, out_dtype, e.inner, e.extent)) {
    return xla_row_sums(reinterpret_cast<const float*>(in), e.outer, e.extent, e.outer,
                        reinterpret_cast<float*>(out));
  }
  if (is_half_dtype(dtype) && (out_dtype == dtype || out_dtype == DType::kFloat32) &&
      xla_ordered_sum(op, DType::kFloat32, DType::kFloat32, e.inner, e.extent)) {
    return xla_half_row_sums(dtype, in, e.outer, e.extent, out_dtype, out);
  }
  if (is_half_dtype(dtype) && (out_dtype == dtype || out_dtype == DType::kFloat32)) {
    std::vector<float> result;
    float* target = reinterpret_cast<float*>(out);
    if (out_dtype == dtype) {
      result.resize(static_cast<size_t>(e.outer * e.inner));
      target = result.data();
    }
    if (reduce_half_in_pieces(op, dtype, in, e, target)) {
      if (out_dtype == dtype) from_wide(out_dtype, result, out);
      return;
    }
  }
  const int64_t n = e.outer * e.extent * e.inner;
  // Converted copies are written whole before they are read: not zeroed first (a bfloat16 sum
  // over 4096 x 2048 spent longer zeroing its 32 MiB float32 copy than summing it).
  std::unique_ptr<std::byte[]> widened;
  if (dtype != out_dtype) {  // a widening sum: convert first, then reduce in the wide type
    widened.reset(new std::byte[static_cast<size_t>(n) * dtype_size(out_dtype)]);
    convert_split(dtype, out_dtype, in, widened.get(), n);
    in = widened.get();
  }
  visit_compute_type(out_dtype, [&](auto zero) {
    using T = decltype(zero);
    if (is_half_dtype(out_dtype)) {
      const std::unique_ptr<float[]> wide(new float[static_cast<size_t>(n)]);
      convert_split(out_dtype, DType::kFloat32, in, reinterpret_cast<std::byte*>(wide.get()), n);
      std::vector<float> result(static_cast<size_t>(e.outer * e.inner));
      reduce_typed<float>(op, wide.get(), e, result.data());
      from_wide(out_dtype, result, out);
      return;
    }
    reduce_typed<T>(op, reinterpret_cast<const T*>(in), e, reinterpret_cast<T*>(out));
  });
}

void reduce_rows(Reduce op, DType dtype, const std::byte* in, int64_t rows, int64_t extent,
                 int64_t input_rows, std::byte* out) {
  if (xla_ordered_sum(op, dtype, dtype, 1, extent)) {
    const auto* x = reinterpret_cast<const float*>(in);
    auto* y = reinterpret_cast<float*>(out);
    if (input_rows * extent >= kYnnReduceElements && ynn_short_row_sums(x, rows, extent, y)) return;
    for (int64_t r = 0; r < rows; ++r)
      y[r] = xla_row_sum(x + r * extent, extent, input_rows * extent);
    return;
  }
  auto typed = [&](auto zero) {
    using T = decltype(zero);
    const auto* x = reinterpret_cast<const T*>(in);
    auto* y = reinterpret_cast<T*>(out);
    if ((op == Reduce::kMax || op == Reduce::kMin) && extent > 0) {  // as reduce_typed does
      return extremes_of_rows(op == Reduce::kMax, x, rows, extent, extent, y);
    }
    for (int64_t r = 0; r < rows; ++r)
      reduce_columns(op, Columns<T>{x + r * extent, extent, 1, 1}, y + r);
  };
  if (dtype == DType::kFloat32) return typed(0.0f);
  if (dtype != DType::kFloat64) {
    throw InvalidArgument(
        fmt::format("reduce_rows: float32 or float64, not {}", dtype_name(dtype)));
  }
  typed(0.0);
}

void reduce_made_rows(Reduce op, DType dtype, int64_t rows, int64_t width, const MakeRows& makers,
                      std::byte* out) {
  if (rows <= 0 || width <= 0) {
    throw InvalidArgument(fmt::format("reduce_made_rows: {} rows of {} columns", rows, width));
  }
  if (dtype == DType::kFloat32) {
    return reduce_made_typed(op, rows, width, makers, reinterpret_cast<float*>(out));
  }
  if (dtype != DType::kFloat64) {
    throw InvalidArgument(
        fmt::format("reduce_made_rows: float32 or float64, not {}", dtype_name(dtype)));
  }
  reduce_made_typed(op, rows, width, makers, reinterpret_cast<double*>(out));
}

void argmax(DType dtype, const std::byte* in, const Shape& shape, int axis, std::byte* out) {
  const Extents e = extents_of(shape, axis);
  if (e.extent == 0) throw InvalidArgument("argmax over an empty axis");
  auto* result = reinterpret_cast<int32_t*>(out);
  if (is_half_dtype(dtype)) return argmax_along(FloatReader<float>{in, dtype}, e, result);
  // bools are bytes of 0 or 1: along a row the first true byte (memchr, which stops there), else
  // uint8's first maximum, on the team as the others.
  if (dtype == DType::kBool && e.inner == 1) {
    parallel_for(e.outer, std::max<int64_t>(1, kPartElements / e.extent), 1,
                 [&](int64_t first, int64_t last) {
                   for (int64_t o = first; o < last; ++o) {
                     const auto* row = reinterpret_cast<const char*>(in + o * e.extent);
                     const void* hit = std::memchr(row, 1, static_cast<size_t>(e.extent));
                     result[o] = hit == nullptr
                                     ? 0
                                     : static_cast<int32_t>(static_cast<const char*>(hit) - row);
                   }
                 });
    return;
  }
  if (dtype == DType::kBool) return argmax_along(FloatReader<uint8_t>{in, dtype}, e, result);
  visit_compute_type(dtype, [&](auto zero) {
    using T = decltype(zero);
    if constexpr (!std::is_same_v<T, bool>) argmax_along(FloatReader<T>{in, dtype}, e, result);
  });
}

}  // namespace spmd::kernels
