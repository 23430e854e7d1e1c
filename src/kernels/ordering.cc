// Order-dependent kernels (ordering.h). The loops are XLA's and JAX's algorithms, not a library's:
// equality with JAX's values is the point, and it depends on the order of each addition and
// comparison.
#include "kernels/ordering.h"

#include <fmt/format.h>
#include <hwy/contrib/sort/vqsort.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <numeric>
#include <type_traits>
#include <vector>

#include "kernels/dispatch.h"
#include "kernels/row_copy.h"
#include "kernels/thread_team.h"
#include "spmd/error.h"

namespace spmd::kernels {
namespace {

// `shape` as outer × n × inner around `axis`: the lines along it, n elements each, inner apart.
struct Lines {
  int64_t outer, n, inner;
};
Lines lines_of(const Shape& shape, int axis) {
  const auto begin = shape.begin(), at = begin + axis;
  return {std::accumulate(begin, at, int64_t{1}, std::multiplies<>()), *at,
          std::accumulate(at + 1, shape.end(), int64_t{1}, std::multiplies<>())};
}

constexpr int64_t kBase = 16;  // XLA's ReduceWindowRewriter base length on CPU

// search_sorted's queries searched side by side, and the fewest a part of the team takes.
constexpr int64_t kSearchesTogether = 16;
constexpr int64_t kSearchGrain = 256;

// XLA's two cumulative reductions: the operation and its identity.
struct Add {
  template <class T>
  static T apply(T a, T b) {
    return static_cast<T>(a + b);
  }
  template <class T>
  static constexpr T identity() {
    return T{0};
  }
};
struct Multiply {
  template <class T>
  static T apply(T a, T b) {
    return static_cast<T>(a * b);
  }
  template <class T>
  static constexpr T identity() {
    return T{1};
  }
};

// Running results of x[0..n) from the first, at out (XLA's reduce-window over one window).
template <class Op, class T>
void running(const T* x, int64_t n, T* out) {
  T acc = Op::template identity<T>();
  for (int64_t i = 0; i < n; ++i) out[i] = acc = Op::apply(acc, x[i]);
}

// The inclusive scan of n contiguous values in XLA's order (ordering.h: cumsum).
template <class Op, class T>
void xla_scan(const T* x, int64_t n, T* out) {
  if (n <= kBase) {
    running<Op>(x, n, out);
    return;
  }
  const T identity = Op::template identity<T>();
  const int64_t rows = (n + kBase - 1) / kBase;
  std::vector<T> padded(static_cast<size_t>(rows * kBase), identity);
  std::copy(x, x + n, padded.begin());
  std::vector<T> prefix(padded.size());
  std::vector<T> totals(static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) {
    running<Op>(padded.data() + r * kBase, kBase, prefix.data() + r * kBase);
    totals[static_cast<size_t>(r)] = prefix[static_cast<size_t>(r * kBase + kBase - 1)];
  }
  // The rows' exclusive running result: in order for a few rows, else the shifted scan of them.
  std::vector<T> before(static_cast<size_t>(rows), identity);
  if (rows <= kBase) {
    running<Op>(totals.data(), rows - 1, before.data() + 1);
  } else {
    std::vector<T> inclusive(static_cast<size_t>(rows));
    xla_scan<Op>(totals.data(), rows, inclusive.data());
    std::copy(inclusive.begin(), inclusive.end() - 1, before.begin() + 1);
  }
  for (int64_t i = 0; i < n; ++i) {
    out[i] = Op::apply(prefix[static_cast<size_t>(i)], before[static_cast<size_t>(i / kBase)]);
  }
}

// xla_scan of `w` lines at once, each along its own column: element i of the lines is the w
// values at x + i * xs, written at out + i * os. Every column gets xla_scan's operations in its
// order (the same bits), while each step reads and writes w contiguous values: a scan down a
// leading axis gathered each column into a line first, a stride apart, and allocated per line
// (jnp.cumsum(a, 0) over 1024 x 1024 float32 took 14 ms, JAX 4.5).
template <class Op, class T>
void xla_scan_columns(const T* x, int64_t n, int64_t w, int64_t xs, T* out, int64_t os) {
  const T identity = Op::template identity<T>();
  const auto step = [&](T* acc, const T* v) {
    for (int64_t j = 0; j < w; ++j) acc[j] = Op::apply(acc[j], v[j]);
  };
  std::vector<T> acc(static_cast<size_t>(w), identity);
  if (n <= kBase) {
    for (int64_t i = 0; i < n; ++i) {
      step(acc.data(), x + i * xs);
      std::copy_n(acc.data(), w, out + i * os);
    }
    return;
  }
  const int64_t rows = (n + kBase - 1) / kBase;
  const std::vector<T> pad(static_cast<size_t>(w), identity);
  std::vector<T> prefix(static_cast<size_t>(rows * kBase * w));
  std::vector<T> totals(static_cast<size_t>(rows * w));
  for (int64_t r = 0; r < rows; ++r) {
    std::fill(acc.begin(), acc.end(), identity);
    for (int64_t k = 0; k < kBase; ++k) {
      const int64_t i = r * kBase + k;
      step(acc.data(), i < n ? x + i * xs : pad.data());
      std::copy_n(acc.data(), w, prefix.data() + i * w);
    }
    std::copy_n(acc.data(), w, totals.data() + r * w);
  }
  // The rows' exclusive running result: in order for a few rows, else the shifted scan of them.
  std::vector<T> before(static_cast<size_t>(rows * w), identity);
  if (rows <= kBase) {
    std::fill(acc.begin(), acc.end(), identity);
    for (int64_t r = 0; r + 1 < rows; ++r) {
      step(acc.data(), totals.data() + r * w);
      std::copy_n(acc.data(), w, before.data() + (r + 1) * w);
    }
  } else {  // all `rows` scanned, the last dropped, as xla_scan does (its order depends on n)
    std::vector<T> inclusive(static_cast<size_t>(rows * w));
    xla_scan_columns<Op>(totals.data(), rows, w, w, inclusive.data(), w);
    std::copy_n(inclusive.data(), (rows - 1) * w, before.data() + w);
  }
  for (int64_t i = 0; i < n; ++i) {
    const T* p = prefix.data() + i * w;
    const T* b = before.data() + (i / kBase) * w;
    T* y = out + i * os;
    for (int64_t j = 0; j < w; ++j) y[j] = Op::apply(p[j], b[j]);
  }
}

// JAX's sort key of a float: -0 as 0, every NaN as the positive quiet NaN, then ordered as the
// total order orders bit patterns (sign-magnitude turned into two's complement).
template <class T>
auto sort_key(T v) {
  if constexpr (std::is_floating_point_v<T>) {
    using Bits = std::conditional_t<sizeof(T) == 4, int32_t, int64_t>;
    if (v == T{0}) v = T{0};
    if (std::isnan(v)) v = std::numeric_limits<T>::quiet_NaN();
    const auto bits = std::bit_cast<Bits>(v);
    constexpr Bits kMagnitude = std::numeric_limits<Bits>::max();
    return bits < 0 ? static_cast<Bits>(bits ^ kMagnitude) : bits;
  } else {
    return v;
  }
}

template <class F>
decltype(auto) visit_orderable(DType dtype, F&& f) {
  switch (dtype) {
    case DType::kInt32:
      return f(int32_t{});
    case DType::kInt64:
      return f(int64_t{});
    case DType::kUInt32:
      return f(uint32_t{});
    case DType::kUInt64:
      return f(uint64_t{});
    case DType::kFloat64:
      return f(double{});
    default:
      return f(float{});
  }
}

}  // namespace

bool orderable(DType dtype) {
  switch (dtype) {
    case DType::kInt32:
    case DType::kInt64:
    case DType::kUInt32:
    case DType::kUInt64:
    case DType::kFloat32:
    case DType::kFloat64:
      return true;
    default:
      return false;
  }
}

namespace {

// The scan of every line of `in` along `axis`.
template <class Op>
void scan_lines(DType dtype, const std::byte* in, const Shape& shape, int axis, std::byte* out) {
  visit_orderable(dtype, [&](auto t) {
    using T = decltype(t);
    const auto d = static_cast<size_t>(axis);
    const int64_t n = shape[d];
    const int64_t inner =
        std::accumulate(shape.begin() + axis + 1, shape.end(), int64_t{1}, std::multiplies<>());
    // Nothing to scan when any dimension is 0 (n * inner would divide by zero).
    const int64_t outer = n * inner == 0 ? 0 : shape_size(shape) / (n * inner);
    const T* x = reinterpret_cast<const T*>(in);
    T* y = reinterpret_cast<T*>(out);
    if (inner > 1) {  // columns side by side, kScanColumns at a time, split over the team
      constexpr int64_t kScanColumns = 128;
      const int64_t chunks = (inner + kScanColumns - 1) / kScanColumns;
      parallel_for(outer * chunks, 1, 1, [&](int64_t first, int64_t last) {
        for (int64_t at = first; at < last; ++at) {
          const int64_t o = at / chunks, j = at % chunks * kScanColumns;
          const int64_t base = o * n * inner + j;
          xla_scan_columns<Op>(x + base, n, std::min(kScanColumns, inner - j), inner, y + base,
                               inner);
        }
      });
      return;
    }
    std::vector<T> line(static_cast<size_t>(n)), results(static_cast<size_t>(n));
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t j = 0; j < inner; ++j) {
        const int64_t base = o * n * inner + j;
        for (int64_t i = 0; i < n; ++i) line[static_cast<size_t>(i)] = x[base + i * inner];
        xla_scan<Op>(line.data(), n, results.data());
        for (int64_t i = 0; i < n; ++i) y[base + i * inner] = results[static_cast<size_t>(i)];
      }
    }
  });
}

}  // namespace

void cumsum(DType dtype, const std::byte* in, const Shape& shape, int axis, std::byte* out) {
  scan_lines<Add>(dtype, in, shape, axis, out);
}

void cumprod(DType dtype, const std::byte* in, const Shape& shape, int axis, std::byte* out) {
  scan_lines<Multiply>(dtype, in, shape, axis, out);
}

void search_sorted(DType dtype, const std::byte* sorted, int64_t n, const std::byte* queries,
                   int64_t count, int32_t* out) {
  visit_orderable(dtype, [&](auto t) {
    using T = decltype(t);
    using Key = decltype(sort_key(T{}));
    const T* a = reinterpret_cast<const T*>(sorted);
    const T* q = reinterpret_cast<const T*>(queries);
    const int levels = static_cast<int>(std::ceil(std::log2(static_cast<double>(n) + 1)));
    // kSearchesTogether queries halve their ranges side by side, level by level: each level's
    // reads are independent of one another and wait on memory together. One query at a time,
    // each read waited for the one before it: 4,096 queries into 2^20 float32s took 0.64 ms,
    // JAX's 0.16. The team takes ranges of queries.
    parallel_for(count, kSearchGrain, kSearchesTogether, [&](int64_t first, int64_t last) {
      for (int64_t b = first; b < last; b += kSearchesTogether) {
        const int64_t m = std::min(kSearchesTogether, last - b);
        std::array<Key, kSearchesTogether> key{};
        std::array<uint64_t, kSearchesTogether> low{}, high{};
        for (int64_t j = 0; j < m; ++j) {
          key[j] = sort_key(q[b + j]);
          high[j] = static_cast<uint64_t>(n);
        }
        for (int l = 0; l < levels; ++l) {
          for (int64_t j = 0; j < m; ++j) {
            const uint64_t mid = low[j] + (high[j] - low[j]) / 2;
            const bool go_left = key[j] <= sort_key(a[mid]);
            (go_left ? high[j] : low[j]) = mid;
          }
        }
        for (int64_t j = 0; j < m; ++j) out[b + j] = static_cast<int32_t>(high[j]);
      }
    });
  });
}

void top_k(DType dtype, const std::byte* in, int64_t n, int64_t k, int32_t* out) {
  visit_orderable(dtype, [&](auto t) {
    using T = decltype(t);
    const T* x = reinterpret_cast<const T*>(in);
    std::vector<int32_t> order(static_cast<size_t>(n));
    std::iota(order.begin(), order.end(), 0);
    std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](int32_t a, int32_t b) {
      const auto ka = sort_key(x[a]), kb = sort_key(x[b]);
      return ka > kb || (ka == kb && a < b);
    });
    std::copy(order.begin(), order.begin() + k, out);
  });
}

// take's rows per part of the team: about this many bytes, so that a part's copying pays for
// waking a helper.
constexpr int64_t kTakeGrainBytes = int64_t{1} << 17;

namespace {

// Whether indices[0..count) are n − 1, …, 1, 0: a take of them reverses each line (jnp.flip).
// Checked a chunk at a time without a branch per index, so that the loop runs in vector lanes
// (flip's 2^20 indices: a scalar loop with an exit per index was a third of its take).
bool reversal(const int32_t* indices, int64_t count, int64_t n) {
  if (count != n) return false;
  constexpr int64_t kChunk = 4096;
  for (int64_t first = 0; first < count; first += kChunk) {
    const int64_t last = std::min(count, first + kChunk);
    int64_t differ = 0;
    for (int64_t i = first; i < last; ++i) differ |= int64_t{indices[i]} ^ (n - 1 - i);
    if (differ != 0) return false;
  }
  return true;
}

// Each of `lines` lines of n rows of `inner` elements of 1, 2, 4 or 8 bytes, its rows reversed
// (rows [first_row, last_row) of each result line, the rest untouched):
// with rows of one element a loop GCC vectorises with the lanes permuted in the AVX2 clone, else a
// loop over each row's elements. Through the general gathers of take() below, jnp.flip of a
// float16 1024 × 1024 along its last axis took 0.17 ms against JAX's 0.05, and of a float32
// (64, 1000, 3) along its middle axis, each row a copy of its own, 0.15 against 0.05. False,
// doing nothing, for another element size.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("arch=x86-64-v3", "default"), flatten))
#endif
bool reverse_lines(size_t element_size, const std::byte* in, int64_t lines, int64_t n,
                   int64_t inner, std::byte* out, int64_t first_row, int64_t last_row) {
  return visit_bits(element_size, [&](auto zero) {
    using E = decltype(zero);
    const auto* x = reinterpret_cast<const E*>(in);
    auto* y = reinterpret_cast<E*>(out);
    for (int64_t l = 0; l < lines; ++l) {
      const E* line = x + l * n * inner;
      E* to = y + l * n * inner;
      if (inner == 1) {
        for (int64_t i = first_row; i < last_row; ++i) to[i] = line[n - 1 - i];
        continue;
      }
      for (int64_t i = first_row; i < last_row; ++i) {
        const E* row = line + (n - 1 - i) * inner;
        for (int64_t j = 0; j < inner; ++j) to[i * inner + j] = row[j];
      }
    }
  });
}

// take along the last axis of elements of 1, 2, 4 or 8 bytes: each line's elements gathered
// by a loop over the clamped indices (clamped once for all lines), the team taking ranges of
// lines. As rows of one element each, every element was a row copy with its own prefetch:
// jnp.flip of 1024 x 1024 float32 along its last axis (a take of reversed indices) took 1.1 ms,
// JAX's 0.12. False, doing nothing, for another element size or axis.
bool take_elements(size_t element_size, const std::byte* in, const Lines& lines,
                   const int32_t* indices, int64_t count, std::byte* out) {
  if (lines.inner != 1) return false;
  const auto gather = [&](auto zero) {
    using E = decltype(zero);
    std::vector<int32_t> at(static_cast<size_t>(count));
    for (int64_t i = 0; i < count; ++i) {
      // In 64 bits: an axis may be longer than an int32 holds (the index always fits).
      at[static_cast<size_t>(i)] =
          static_cast<int32_t>(std::clamp<int64_t>(indices[i], 0, lines.n - 1));
    }
    const auto* x = reinterpret_cast<const E*>(in);
    auto* y = reinterpret_cast<E*>(out);
    const int64_t grain = std::max<int64_t>(
        1, kTakeGrainBytes / std::max<int64_t>(count * static_cast<int64_t>(sizeof(E)), 1));
    parallel_for(lines.outer, grain, 1, [&](int64_t first, int64_t last) {
      for (int64_t o = first; o < last; ++o) {
        const E* line = x + o * lines.n;
        E* to = y + o * count;
        for (int64_t i = 0; i < count; ++i) to[i] = line[at[static_cast<size_t>(i)]];
      }
    });
  };
  return visit_bits(element_size, gather);
}

}  // namespace

namespace {

// Whether any of the indices lies outside [0, n).
bool any_outside(const int32_t* indices, int64_t count, int64_t n) {
  bool outside = false;
  for (int64_t i = 0; i < count; ++i) outside |= indices[i] < 0 || indices[i] >= n;
  return outside;
}

// take with `fill` for the indices outside the axis (some are): each row of the result copied
// from its line's row, or from a row of the fill element.
void take_filled(size_t element_size, const std::byte* in, const Lines& lines,
                 const int32_t* indices, int64_t count, std::byte* out, const std::byte* fill) {
  const size_t row = static_cast<size_t>(lines.inner) * element_size;
  std::vector<std::byte> fill_row(row);
  for (size_t at = 0; at < row; at += element_size) std::memcpy(&fill_row[at], fill, element_size);
  const int64_t grain =
      std::max<int64_t>(1, kTakeGrainBytes / std::max<int64_t>(static_cast<int64_t>(row), 1));
  parallel_for(lines.outer * count, grain, 1, [&](int64_t first, int64_t last) {
    for (int64_t k = first; k < last; ++k) {
      const int64_t o = k / count, index = indices[k % count];
      const bool inside = index >= 0 && index < lines.n;
      copy_row(out + static_cast<size_t>(k) * row,
               inside ? in + static_cast<size_t>(o * lines.n + index) * row : fill_row.data(), row);
    }
  });
}

}  // namespace

void take(size_t element_size, const std::byte* in, const Shape& shape, int axis,
          const int32_t* indices, int64_t count, std::byte* out, const std::byte* fill) {
  const Lines lines = lines_of(shape, axis);
  if (fill != nullptr && any_outside(indices, count, lines.n)) {
    return take_filled(element_size, in, lines, indices, count, out, fill);
  }
  if (lines.n > 0 && reversal(indices, count, lines.n) && element_size <= 8) {
    const int64_t row_bytes = lines.inner * static_cast<int64_t>(element_size);
    const int64_t line_bytes = lines.n * row_bytes;
    if (lines.outer < team_size()) {  // few lines (a flat flip): the team splits each line's rows
      const int64_t grain = std::max<int64_t>(1, kTakeGrainBytes / std::max<int64_t>(row_bytes, 1));
      for (int64_t o = 0; o < lines.outer; ++o) {
        const auto at = static_cast<size_t>(o * line_bytes);
        parallel_for(lines.n, grain, 16, [&](int64_t first, int64_t last) {
          reverse_lines(element_size, in + at, 1, lines.n, lines.inner, out + at, first, last);
        });
      }
      return;
    }
    const int64_t grain = std::max<int64_t>(1, kTakeGrainBytes / std::max<int64_t>(line_bytes, 1));
    parallel_for(lines.outer, grain, 1, [&](int64_t first, int64_t last) {
      const auto at = static_cast<size_t>(first * line_bytes);
      reverse_lines(element_size, in + at, last - first, lines.n, lines.inner, out + at, 0,
                    lines.n);
    });
    return;
  }
  if (lines.n > 0 && take_elements(element_size, in, lines, indices, count, out)) return;
  const int64_t n = lines.n;
  const size_t row = static_cast<size_t>(lines.inner) * element_size;
  // Random rows of a large array miss the cache one after another; asking for the row some
  // iterations ahead keeps many misses in flight, and the team's threads each keep theirs: about
  // 8 KiB of rows, 16 to 128 of them. x[i, j] of 2^20 pairs from 2048 × 2048 float32s took
  // 8.6 ms asking 16 ahead on one thread, 4.4-4.6 asking 128 on two (JAX 0.10.2: 4.8).
  const auto row_bytes = std::max<int64_t>(static_cast<int64_t>(row), 1);
  const int64_t ahead = std::clamp<int64_t>(8192 / row_bytes, 16, 128);
  const auto source = [&](int64_t o, int64_t i) {
    return in + static_cast<size_t>(o * n + std::clamp<int64_t>(indices[i], 0, n - 1)) * row;
  };
  const int64_t grain = std::max<int64_t>(1, kTakeGrainBytes / row_bytes);
  parallel_for(lines.outer * count, grain, 1, [&](int64_t first, int64_t last) {
    int64_t o = first / count, i = first % count;
    for (int64_t k = first; k < last; ++k) {
      if (i + ahead < count) __builtin_prefetch(source(o, i + ahead));
      copy_row(out + static_cast<size_t>(k) * row, source(o, i), row);
      if (++i == count) {
        i = 0;
        ++o;
      }
    }
  });
}

void scatter_add(DType dtype, const std::byte* updates, const Shape& shape, int axis,
                 const int32_t* indices, int64_t count, std::byte* out) {
  const Lines lines = lines_of(shape, axis);
  const int64_t outer = lines.outer, n = lines.n, inner = lines.inner;
  visit_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    if constexpr (std::is_floating_point_v<T> || is_half<T>) {
      const T* u = reinterpret_cast<const T*>(updates);
      T* y = reinterpret_cast<T*>(out);
      std::fill(y, y + outer * n * inner, T{});
      for (int64_t o = 0; o < outer; ++o) {
        for (int64_t i = 0; i < count; ++i) {
          const int64_t at = std::clamp<int64_t>(indices[i], 0, n - 1);
          T* row = y + (o * n + at) * inner;
          const T* from = u + (o * count + i) * inner;
          for (int64_t j = 0; j < inner; ++j) {
            if constexpr (is_half<T>) {
              const float sum = to_float(row[j]) + to_float(from[j]);
              if constexpr (std::is_same_v<T, float16>) {
                row[j] = to_float16(sum);
              } else {
                row[j] = to_bfloat16(sum);
              }
            } else {
              row[j] += from[j];
            }
          }
        }
      }
    } else {
      throw InvalidArgument(fmt::format("scatter_add of {}: it adds floats", dtype_name(dtype)));
    }
  });
}

namespace {

// Copies element `from` of `src` to element `to` of `dst`, elements of `size` bytes.
void copy_element(const std::byte* src, int64_t from, std::byte* dst, int64_t to, size_t size) {
  std::memcpy(dst + static_cast<size_t>(to) * size, src + static_cast<size_t>(from) * size, size);
}

// A line's elements as unsigned integers that order as sort() orders them, each distinct: the
// element's sort_key made unsigned (two's complement's sign bit flipped) and inverted for a
// descending sort, above its position, inverted where equal keys go later first. Sorted as plain
// integers (Highway's vqsort, which is not stable), they give the comparator's stable order.
// 32-bit keys pack into a uint64_t, 64-bit ones into a uint128_t (key high, position low).
template <class T>
struct Packing {
  using Key = decltype(sort_key(T{}));
  using Unsigned = std::make_unsigned_t<Key>;
  static constexpr bool kWide = sizeof(Key) == 8;
  using Packed = std::conditional_t<kWide, hwy::uint128_t, uint64_t>;

  bool descending, later_first;

  Packed pack(T v, int64_t position) const {
    auto key = static_cast<Unsigned>(sort_key(v));
    if constexpr (std::is_signed_v<Key>) key ^= Unsigned{1} << (8 * sizeof(Key) - 1);
    if (descending) key = ~key;
    const auto at = static_cast<uint32_t>(later_first ? ~position : position);
    if constexpr (kWide) {
      return {.lo = at, .hi = key};
    } else {
      return uint64_t{key} << 32 | at;
    }
  }
  int64_t position(const Packed& p) const {
    uint32_t at = 0;
    if constexpr (kWide) {
      at = static_cast<uint32_t>(p.lo);
    } else {
      at = static_cast<uint32_t>(p);
    }
    return later_first ? int64_t{static_cast<uint32_t>(~at)} : int64_t{at};
  }
};

// Lines per part of the team: at least this many elements.
constexpr int64_t kSortGrain = int64_t{1} << 14;

}  // namespace

void sort(DType key_dtype, const std::byte* keys, const SortSpec& spec, const std::byte* payload,
          std::byte* out) {
  const Lines lines = lines_of(spec.shape, spec.axis);
  const int64_t n = lines.n, inner = lines.inner;
  if (n == 0) return;
  // Equal keys: the later first only for a descending sort with a payload (ordering.h).
  const bool later_first = spec.descending && spec.payload_size > 0;
  visit_orderable(key_dtype, [&](auto t) {
    using T = decltype(t);
    const Packing<T> packing{.descending = spec.descending, .later_first = later_first};
    const T* x = reinterpret_cast<const T*>(keys);
    const int64_t grain = std::max<int64_t>(1, kSortGrain / n);
    parallel_for(lines.outer * inner, grain, 1, [&](int64_t first, int64_t last) {
      const hwy::Sorter sorter;  // its buffers for this part's lines
      std::vector<typename Packing<T>::Packed> line(static_cast<size_t>(n));
      for (int64_t l = first; l < last; ++l) {
        const int64_t base = l / inner * n * inner + l % inner;
        for (int64_t i = 0; i < n; ++i) line[size_t(i)] = packing.pack(x[base + i * inner], i);
        sorter(line.data(), line.size(), hwy::SortAscending());
        if (spec.payload_size == 0) {
          auto* y = reinterpret_cast<int32_t*>(out);
          for (int64_t i = 0; i < n; ++i) {
            y[base + i * inner] = static_cast<int32_t>(packing.position(line[size_t(i)]));
          }
        } else if (!visit_bits(spec.payload_size, [&](auto u) {
                     using U = decltype(u);
                     const auto* p = reinterpret_cast<const U*>(payload);
                     auto* y = reinterpret_cast<U*>(out);
                     for (int64_t i = 0; i < n; ++i) {
                       y[base + i * inner] = p[base + packing.position(line[size_t(i)]) * inner];
                     }
                   })) {
          for (int64_t i = 0; i < n; ++i) {
            copy_element(payload, base + packing.position(line[size_t(i)]) * inner, out,
                         base + i * inner, spec.payload_size);
          }
        }
      }
    });
  });
}

}  // namespace spmd::kernels
