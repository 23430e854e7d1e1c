#include "kernels/layout.h"

#include <fmt/format.h>

#include <Eigen/Core>
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <unsupported/Eigen/CXX11/Tensor>
#include <utility>
#include <vector>

#include "kernels/dispatch.h"
#include "kernels/strided_copy.h"
#include "kernels/thread_team.h"
#include "kernels/tile_transpose.h"
#include "spmd/error.h"

namespace spmd::kernels {
namespace {

template <int N>
using Dims = Eigen::array<Eigen::Index, N>;

template <int N>
Dims<N> dims_of(const Shape& shape) {
  Dims<N> d;
  for (int i = 0; i < N; ++i) d[i] = shape[static_cast<size_t>(i)];
  return d;
}

template <class E, int N>
auto in_map(const std::byte* p, const Shape& shape) {
  return Eigen::TensorMap<Eigen::Tensor<const E, N, Eigen::RowMajor>>(reinterpret_cast<const E*>(p),
                                                                      dims_of<N>(shape));
}

template <class E, int N>
auto out_map(std::byte* p, const Shape& shape) {
  return Eigen::TensorMap<Eigen::Tensor<E, N, Eigen::RowMajor>>(reinterpret_cast<E*>(p),
                                                                dims_of<N>(shape));
}

// Elements per part when the team splits a layout change: copying fewer costs less than waking a
// helper.
constexpr int64_t kLayoutGrain = int64_t{1} << 15;

// Runs part(first, last) over slabs of the result's leading dimension (`extent`), the calling
// thread's team taking the slabs. Each slab is its own smaller instance of the same copy, the
// same Eigen evaluator over contiguous sub-tensors (a slice of a broadcast or shuffle expression
// evaluated element by element and ran at half the speed of the whole). A copy: the bytes are
// those of one call on any team.
template <class F>
void by_slabs(const Shape& extent, F&& part) {
  const int64_t rows = extent[0];
  const int64_t row = rows > 0 ? shape_size(extent) / rows : 0;
  parallel_for(rows, std::max<int64_t>(1, kLayoutGrain / std::max<int64_t>(row, 1)), 1, part);
}

// `shape` with its leading dimension `rows`.
Shape with_rows(Shape shape, int64_t rows) {
  shape[0] = rows;
  return shape;
}

// Elements per step of the leading dimension.
int64_t row_of(const Shape& shape) {
  int64_t n = 1;
  for (size_t d = 1; d < shape.size(); ++d) n *= shape[d];
  return n;
}

// lhs = rhs (both of shape `extent`), slabs of the leading dimension sliced from both sides:
// for concatenation, whose parts are slices of the result already.
template <int N, class Lhs, class Rhs>
void assign_sliced(Lhs lhs, const Rhs& rhs, const Shape& extent) {
  by_slabs(extent, [&](int64_t first, int64_t last) {
    if (first == 0 && last == extent[0]) {
      lhs = rhs;
      return;
    }
    Dims<N> offsets{};
    offsets[0] = first;
    const Dims<N> part = dims_of<N>(with_rows(extent, last - first));
    lhs.slice(offsets, part) = rhs.slice(offsets, part);
  });
}

// Calls f(E{}) for the unsigned integer type E of `element_size` bytes (1, 2, 4 or 8): layout
// kernels move bits, whatever the dtype.
template <class F>
decltype(auto) visit_element(size_t element_size, F&& f) {
  switch (element_size) {
    case 1:
      return f(uint8_t{});
    case 2:
      return f(uint16_t{});
    case 4:
      return f(uint32_t{});
    default:
      return f(uint64_t{});
  }
}

// A permutation with neighbouring dimensions that stay neighbours merged into one, and
// dimensions of one element dropped: (2, 3, 4) permuted (2, 0, 1) is (6, 4) permuted (1, 0).
struct Merged {
  Shape shape;
  std::vector<int> perm;
};

Merged merged(const Shape& shape, std::span<const int> perm) {
  std::vector<int> kept;  // input dimensions of more than one element, in the result's order
  for (int d : perm) {
    if (shape[static_cast<size_t>(d)] != 1) kept.push_back(d);
  }
  // Runs of input dimensions i, i + 1, … that the result keeps in that order become one.
  std::vector<std::pair<int, int64_t>> runs;  // (first input dimension, size)
  for (size_t i = 0; i < kept.size(); ++i) {
    const int64_t size = shape[static_cast<size_t>(kept[i])];
    if (i > 0 && kept[i] == kept[i - 1] + 1) {
      runs.back().second *= size;
    } else {
      runs.emplace_back(kept[i], size);
    }
  }
  std::vector<int> order(runs.size());  // runs in input order
  for (size_t i = 0; i < runs.size(); ++i) order[i] = static_cast<int>(i);
  std::sort(order.begin(), order.end(),
            [&](int a, int b) { return runs[size_t(a)].first < runs[size_t(b)].first; });
  Merged m;
  m.perm.resize(runs.size());
  for (size_t r = 0; r < order.size(); ++r) {
    m.shape.push_back(runs[size_t(order[r])].second);
    m.perm[size_t(order[r])] = static_cast<int>(r);
  }
  return m;
}

// out[b] = in[b]ᵀ for `batch` (rows × cols) matrices, in 16 × 16 tiles (each an Eigen transpose
// of a strided block), the team taking (matrix, band of tiles) pairs. Eigen's tensor shuffle
// walked one side with a stride: 4096 × 2048 float32 took it 29 ms on one core, the tiles 17 on
// one and 8.8 on two (JAX: 19; tiles of 8 ran as 16, of 32 and 64 at 27 and 29 ms).
template <class E>
void transpose_tiles(const E* in, int64_t batch, int64_t rows, int64_t cols, E* out) {
  constexpr int64_t kTile = 16;
  using Matrix = Eigen::Matrix<E, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using In = Eigen::Map<const Matrix, 0, Eigen::OuterStride<>>;
  using Out = Eigen::Map<Matrix, 0, Eigen::OuterStride<>>;
  const int64_t bands = (cols + kTile - 1) / kTile;  // bands of the result's rows
  const int64_t per_band = kTile * rows;
  parallel_for(batch * bands, std::max<int64_t>(1, kLayoutGrain / std::max<int64_t>(per_band, 1)),
               1, [&](int64_t first, int64_t last) {
                 for (int64_t at = first; at < last; ++at) {
                   const E* x = in + at / bands * rows * cols;
                   E* y = out + at / bands * rows * cols;
                   const int64_t j = at % bands * kTile, w = std::min(kTile, cols - j);
                   for (int64_t i = 0; i < rows; i += kTile) {
                     const int64_t h = std::min(kTile, rows - i);
                     Out(y + j * rows + i, w, h, Eigen::OuterStride<>(rows)) =
                         In(x + i * cols + j, h, w, Eigen::OuterStride<>(cols)).transpose();
                   }
                 }
               });
}

// out[b] = in[b]ᵀ through tile_transpose.h's register tiles, the team taking (matrix, block of
// kTransposeBlock rows of it) pairs.
void transpose_in_blocks(size_t size, const std::byte* in, int64_t batch, int64_t rows,
                         int64_t cols, std::byte* out) {
  const int64_t blocks = (rows + kTransposeBlock - 1) / kTransposeBlock;
  const int64_t per_block = kTransposeBlock * cols;
  const int64_t matrix = rows * cols * static_cast<int64_t>(size);
  parallel_for(batch * blocks, std::max<int64_t>(1, kLayoutGrain / std::max<int64_t>(per_block, 1)),
               1, [&](int64_t first, int64_t last) {
                 for (int64_t at = first; at < last; ++at) {
                   const int64_t b = at / blocks, r0 = at % blocks * kTransposeBlock;
                   transpose_rows(size, in + b * matrix, rows, cols, r0,
                                  std::min(r0 + kTransposeBlock, rows), out + b * matrix);
                 }
               });
}

// The transposes of whole matrices, batched or not: 4- and 8-byte elements through
// transpose_in_blocks where the CPU has AVX2, the rest through transpose_tiles; false for
// another permutation.
bool transpose_matrices(size_t element_size, const std::byte* in, const Shape& shape,
                        std::span<const int> perm, std::byte* out) {
  const Merged m = merged(shape, perm);
  int64_t batch = 1, rows = 0, cols = 0;
  if (m.perm == std::vector<int>{1, 0}) {
    rows = m.shape[0];
    cols = m.shape[1];
  } else if (m.perm == std::vector<int>{0, 2, 1}) {
    batch = m.shape[0];
    rows = m.shape[1];
    cols = m.shape[2];
  } else {
    return false;
  }
  if (register_transpose_takes(element_size)) {
    transpose_in_blocks(element_size, in, batch, rows, cols, out);
    return true;
  }
  visit_element(element_size, [&](auto zero) {
    using E = decltype(zero);
    transpose_tiles(reinterpret_cast<const E*>(in), batch, rows, cols, reinterpret_cast<E*>(out));
  });
  return true;
}

// For a merged permutation: the result's shape, and for each input dimension the stride of the
// result dimension it becomes.
struct Placed {
  Shape to;
  std::vector<int64_t> in_strides, out_strides_of_in;
};

Placed placed(const Merged& m) {
  Placed p;
  for (int d : m.perm) p.to.push_back(m.shape[static_cast<size_t>(d)]);
  p.in_strides = row_major_strides(m.shape);
  const std::vector<int64_t> out_strides = row_major_strides(p.to);
  p.out_strides_of_in.resize(m.shape.size());
  for (size_t k = 0; k < m.perm.size(); ++k) {
    p.out_strides_of_in[static_cast<size_t>(m.perm[k])] = out_strides[k];
  }
  return p;
}

// Rows shorter than this many bytes are left to Eigen's shuffle: a copy per row would cost more
// than the row.
constexpr int64_t kMinRowBytes = 64;

// A permutation that keeps the last dimension (rows of `row` contiguous elements in both): each
// result row is one input row, copied; the team takes ranges of result rows.
template <class E>
void permute_rows(const E* in, const Merged& m, E* out) {
  const Placed p = placed(m);
  const size_t rank = m.shape.size();
  const int64_t row = m.shape.back();
  const int64_t rows = shape_size(m.shape) / row;
  parallel_for(rows, std::max<int64_t>(1, kLayoutGrain / row), 1, [&](int64_t first, int64_t last) {
    for (int64_t r = first; r < last; ++r) {
      int64_t rest = r, from = 0;  // result row r's index, its dimensions innermost first
      for (size_t k = rank - 1; k-- > 0;) {
        const auto d = static_cast<size_t>(m.perm[k]);
        from += rest % p.to[k] * p.in_strides[d];
        rest /= p.to[k];
      }
      std::memcpy(out + r * row, in + from, static_cast<size_t>(row) * sizeof(E));
    }
  });
}

// A permutation that moves the last dimension: for every index of the other dimensions (a batch
// with strides of its own in both), a 2-D transpose between the input's last dimension (`cols`,
// contiguous in the input) and the input dimension `a` that becomes the result's last (`rows`,
// contiguous in the result), in 16 × 16 tiles as transpose_tiles; the team takes (batch member,
// band of 16 columns) pairs. (4096 × 2048 × … reversed: Eigen's shuffle walked one side with a
// stride, at 0.71× JAX's speed for a 64⁴ float32 reversal.)
template <class E>
void permute_tiles(const E* in, const Merged& m, E* out) {
  constexpr int64_t kTile = 16;
  using Matrix = Eigen::Matrix<E, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using In = Eigen::Map<const Matrix, 0, Eigen::OuterStride<>>;
  using Out = Eigen::Map<Matrix, 0, Eigen::OuterStride<>>;
  const Placed p = placed(m);
  const size_t rank = m.shape.size();
  const auto a = static_cast<size_t>(m.perm.back());
  const int64_t rows = m.shape[a], cols = m.shape.back();
  const int64_t in_row = p.in_strides[a], out_col = p.out_strides_of_in[rank - 1];
  std::vector<size_t> batch_dims;
  int64_t batch = 1;
  for (size_t d = 0; d + 1 < rank; ++d) {
    if (d != a) {
      batch_dims.push_back(d);
      batch *= m.shape[d];
    }
  }
  const int64_t bands = (cols + kTile - 1) / kTile;
  const int64_t per_band = kTile * rows;
  parallel_for(
      batch * bands, std::max<int64_t>(1, kLayoutGrain / std::max<int64_t>(per_band, 1)), 1,
      [&](int64_t first, int64_t last) {
        for (int64_t at = first; at < last; ++at) {
          int64_t rest = at / bands, from = 0, to = 0;
          for (size_t k = batch_dims.size(); k-- > 0;) {
            const size_t d = batch_dims[k];
            const int64_t i = rest % m.shape[d];
            rest /= m.shape[d];
            from += i * p.in_strides[d];
            to += i * p.out_strides_of_in[d];
          }
          const int64_t j = at % bands * kTile, w = std::min(kTile, cols - j);
          for (int64_t i = 0; i < rows; i += kTile) {
            const int64_t h = std::min(kTile, rows - i);
            Out(out + to + j * out_col + i, w, h, Eigen::OuterStride<>(out_col)) =
                In(in + from + i * in_row + j, h, w, Eigen::OuterStride<>(in_row)).transpose();
          }
        }
      });
}

// Any other permutation of a non-empty array by permute_rows or permute_tiles; false where the
// rows it would copy are short (Eigen's shuffle then).
bool permute_strided(size_t element_size, const std::byte* in, const Shape& shape,
                     std::span<const int> perm, std::byte* out) {
  const Merged m = merged(shape, perm);
  if (m.shape.size() <= 1) {  // nothing moves
    std::memcpy(out, in, static_cast<size_t>(shape_size(shape)) * element_size);
    return true;
  }
  const bool rows = m.perm.back() == static_cast<int>(m.shape.size()) - 1;
  if (rows && m.shape.back() * static_cast<int64_t>(element_size) < kMinRowBytes) return false;
  visit_element(element_size, [&](auto zero) {
    using E = decltype(zero);
    const auto* x = reinterpret_cast<const E*>(in);
    auto* y = reinterpret_cast<E*>(out);
    if (rows) {
      permute_rows(x, m, y);
    } else {
      permute_tiles(x, m, y);
    }
  });
  return true;
}

// Calls f(E{}, std::integral_constant<int, N>{}) for the element type of `element_size` bytes and
// rank N in 1..kMaxRank.
template <class F>
void visit_layout(size_t element_size, size_t rank, F&& f) {
  if (rank < 1 || rank > kMaxRank) {
    throw InvalidArgument(
        fmt::format("arrays of rank {} are not supported (1 to {})", rank, kMaxRank));
  }
  auto by_rank = [&](auto zero) {
    switch (rank) {
      case 1:
        return f(zero, std::integral_constant<int, 1>{});
      case 2:
        return f(zero, std::integral_constant<int, 2>{});
      case 3:
        return f(zero, std::integral_constant<int, 3>{});
      case 4:
        return f(zero, std::integral_constant<int, 4>{});
      case 5:
        return f(zero, std::integral_constant<int, 5>{});
      default:
        return f(zero, std::integral_constant<int, 6>{});
    }
  };
  return visit_element(element_size, by_rank);
}

}  // namespace

namespace {

// out = n copies of the element_size bytes at `element`, on this thread: an integer of the
// element's size stored by std::fill_n (vector stores), else one copy at a time.
void fill_elements_here(size_t element_size, const std::byte* element, int64_t n, std::byte* out) {
  const bool as_bits = visit_bits(element_size, [&](auto zero) {
    decltype(zero) bits;
    std::memcpy(&bits, element, sizeof bits);
    std::fill_n(reinterpret_cast<decltype(zero)*>(out), n, bits);
  });
  if (as_bits) return;
  for (int64_t i = 0; i < n; ++i) {
    std::memcpy(out + i * static_cast<int64_t>(element_size), element, element_size);
  }
}

// out[i * r + k] = in[i] for i in [lo, hi), k < r, elements of 1 to 8 bytes (false for another
// size): one loop, where a fill per element cost a call for a few stores.
bool repeat_elements(size_t element_size, const std::byte* in, int64_t lo, int64_t hi, int64_t r,
                     std::byte* out) {
  return visit_bits(element_size, [&](auto zero) {
    using W = decltype(zero);
    const auto* x = reinterpret_cast<const W*>(in);
    auto* y = reinterpret_cast<W*>(out);
    for (int64_t i = lo; i < hi; ++i) {
      const W v = x[i];
      for (int64_t k = 0; k < r; ++k) y[i * r + k] = v;
    }
  });
}

constexpr int64_t kTileBytes = int64_t{16} << 10;

// A broadcast whose operand's dimensions other than 1 are one run of the result's, as
// A × P × R: the result is A copies of a block of P × R elements, each of the operand's P
// elements R times. Where A is 1 the team writes the runs of R; else the block is written once
// (tiled, where it is small, to about kTileBytes) and copied A times over. Eigen's tensor broadcast
// worked out every element's index: (1024, 1024, 1) to (1024, 1024, 4) float32 took 0.87 ms, as did
// (4,) to the same shape. False, doing nothing, where the operand's dimensions interleave with
// broadcast ones.
bool broadcast_runs(size_t size, const std::byte* in, const Shape& from, std::byte* out,
                    const Shape& to) {
  Shape padded(to.size() - from.size(), 1);
  padded.insert(padded.end(), from.begin(), from.end());
  size_t first = to.size(), last = to.size();
  for (size_t d = 0; d < to.size(); ++d) {
    if (padded[d] == 1) continue;
    if (first == to.size()) first = d;
    if (d > last || (last != to.size() && d != last)) return false;
    last = d + 1;
  }
  int64_t a = 1, p = 1, r = 1;
  for (size_t d = 0; d < to.size(); ++d) {
    if (d < first) {
      a *= to[d];
    } else if (d < last) {
      if (padded[d] != to[d]) return false;
      p *= to[d];
    } else {
      r *= to[d];
    }
  }
  if (a * p * r == 0) return true;
  const auto bytes = static_cast<int64_t>(size);
  if (r > 1 && a == 1) {  // each element R times, the team taking ranges of elements
    parallel_for(p, std::max<int64_t>(1, kLayoutGrain / r), 1, [&](int64_t lo, int64_t hi) {
      if (!repeat_elements(size, in, lo, hi, r, out)) {
        for (int64_t i = lo; i < hi; ++i) {
          fill_elements_here(size, in + i * bytes, r, out + i * r * bytes);
        }
      }
    });
    return true;
  }
  // One block of P x R elements: `in` itself where R is 1, else each element R times.
  const int64_t block = p * r * bytes;
  const auto write_block = [&](std::byte* to) {
    if (r == 1) {
      std::memcpy(to, in, static_cast<size_t>(block));
    } else if (!repeat_elements(size, in, 0, p, r, to)) {
      for (int64_t i = 0; i < p; ++i)
        fill_elements_here(size, in + i * bytes, r, to + i * r * bytes);
    }
  };
  if (block >= kTileBytes) {  // a large block: written once into the result, then copied
    write_block(out);
    parallel_for(a - 1, 1, 1, [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) {
        std::memcpy(out + (i + 1) * block, out, static_cast<size_t>(block));
      }
    });
    return true;
  }
  // A small one, tiled to about kTileBytes and the tile copied over the result.
  const int64_t copies = std::max<int64_t>(1, std::min(a, kTileBytes / block));
  std::vector<std::byte> tile(static_cast<size_t>(block * copies));
  write_block(tile.data());
  for (int64_t c = 1; c < copies; ++c) {
    std::memcpy(tile.data() + c * block, tile.data(), static_cast<size_t>(block));
  }
  parallel_for(a, copies, copies, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; i += copies) {
      std::memcpy(out + i * block, tile.data(),
                  static_cast<size_t>(std::min(copies, hi - i) * block));
    }
  });
  return true;
}

}  // namespace

void broadcast(size_t element_size, const std::byte* in, const Shape& from, std::byte* out,
               const Shape& to) {
  if (to.empty()) {
    std::memcpy(out, in, element_size);
    return;
  }
  if (broadcast_runs(element_size, in, from, out, to)) return;
  Shape padded(to.size() - from.size(), 1);
  padded.insert(padded.end(), from.begin(), from.end());
  visit_layout(element_size, to.size(), [&](auto zero, auto rank) {
    using E = decltype(zero);
    constexpr int N = decltype(rank)::value;
    Dims<N> factors;
    for (int i = 0; i < N; ++i) factors[i] = padded[i] == to[i] ? 1 : to[i];
    // Rows [first, last) of the result: the same rows of `in`, or its one row repeated.
    const bool spread = padded[0] != to[0];
    by_slabs(to, [&](int64_t first, int64_t last) {
      Dims<N> f = factors;
      if (spread) f[0] = last - first;
      const std::byte* from_rows =
          in + (spread ? 0 : first * row_of(padded) * static_cast<int64_t>(element_size));
      out_map<E, N>(out + first * row_of(to) * static_cast<int64_t>(element_size),
                    with_rows(to, last - first)) =
          in_map<E, N>(from_rows, with_rows(padded, spread ? 1 : last - first)).broadcast(f);
    });
  });
}

void transpose(size_t element_size, const std::byte* in, const Shape& shape,
               std::span<const int> perm, std::byte* out) {
  if (shape.empty()) {
    std::memcpy(out, in, element_size);
    return;
  }
  if (shape_size(shape) > 0 && (transpose_matrices(element_size, in, shape, perm, out) ||
                                permute_strided(element_size, in, shape, perm, out))) {
    return;
  }
  Shape to(shape.size());
  for (size_t i = 0; i < shape.size(); ++i) to[i] = shape[static_cast<size_t>(perm[i])];
  visit_layout(element_size, shape.size(), [&](auto zero, auto rank) {
    using E = decltype(zero);
    constexpr int N = decltype(rank)::value;
    Dims<N> p;
    for (int i = 0; i < N; ++i) p[i] = perm[static_cast<size_t>(i)];
    if (perm[0] != 0) {  // the result's rows gather from all of `in`: one call
      out_map<E, N>(out, to) = in_map<E, N>(in, shape).shuffle(p);
      return;
    }
    // The leading dimension stays: rows [first, last) of the result are those rows of `in`,
    // permuted within.
    by_slabs(to, [&](int64_t first, int64_t last) {
      const auto size = static_cast<int64_t>(element_size);
      out_map<E, N>(out + first * row_of(to) * size, with_rows(to, last - first)) =
          in_map<E, N>(in + first * row_of(shape) * size, with_rows(shape, last - first))
              .shuffle(p);
    });
  });
}

void slice(size_t element_size, const std::byte* in, const Shape& shape,
           std::span<const int64_t> start, const Shape& extent, std::byte* out) {
  if (shape.empty() || shape_size(extent) == 0) {
    if (shape.empty()) std::memcpy(out, in, element_size);
    return;
  }
  visit_layout(element_size, shape.size(), [&](auto zero, auto rank) {
    using E = decltype(zero);
    constexpr int N = decltype(rank)::value;
    // Rows [first, last) of the result: rows start[0] + first, … of the window.
    by_slabs(extent, [&](int64_t first, int64_t last) {
      Dims<N> offsets;
      for (int i = 0; i < N; ++i) offsets[i] = start[static_cast<size_t>(i)];
      offsets[0] += first;
      const Shape part = with_rows(extent, last - first);
      out_map<E, N>(out + first * row_of(extent) * static_cast<int64_t>(element_size), part) =
          in_map<E, N>(in, shape).slice(offsets, dims_of<N>(part));
    });
  });
}

namespace {

// An element of `Size` bytes, copied whole.
template <size_t Size>
struct Element {
  std::array<std::byte, Size> bytes;
};

// n elements read kStep apart: a step known when compiled, which GCC vectorises with permutes
// (a reversal, every second element) where a step read at run time is an element at a time.
template <int64_t kStep, class E>
void copy_stepped(const E* from, int64_t n, E* to) {
  for (int64_t i = 0; i < n; ++i) to[i] = from[i * kStep];
}

// n elements of a line read `step` elements apart from `from` into `to`.
template <class E>
void copy_line(const E* from, int64_t step, int64_t n, E* to) {
  switch (step) {
    case 1:
      std::copy_n(from, n, to);
      return;
    case -1:
      return copy_stepped<-1>(from, n, to);
    case 2:
      return copy_stepped<2>(from, n, to);
    case -2:
      return copy_stepped<-2>(from, n, to);
    default:
      for (int64_t i = 0; i < n; ++i) to[i] = from[i * step];
  }
}

template <class E>
void strided_slice_typed(const E* in, const Shape& shape, std::span<const int64_t> start,
                         std::span<const int64_t> step, const Shape& extent, E* out) {
  const size_t rank = shape.size();
  const std::vector<int64_t> strides = row_major_strides(shape);
  const int64_t line = extent[rank - 1];
  const int64_t last_step = step[rank - 1] * strides[rank - 1];
  // Elements [first, last) of the result: the pieces of its lines they cover, in order.
  parallel_for(shape_size(extent), kLayoutGrain, 64, [&](int64_t first, int64_t last) {
    std::vector<int64_t> index(rank, 0);  // the first element's, over extent
    for (size_t d = rank, rest = static_cast<size_t>(first); d-- > 0;) {
      const auto e = static_cast<size_t>(extent[d]);
      index[d] = static_cast<int64_t>(rest % e);
      rest /= e;
    }
    for (int64_t at = first; at < last;) {
      int64_t from = 0;
      for (size_t d = 0; d < rank; ++d) from += (start[d] + index[d] * step[d]) * strides[d];
      const int64_t n = std::min(line - index[rank - 1], last - at);
      copy_line(in + from, last_step, n, out + at);
      at += n;
      index[rank - 1] = 0;  // the next line, its index carried up
      for (size_t d = rank - 1; d-- > 0 && ++index[d] == extent[d];) index[d] = 0;
    }
  });
}

}  // namespace

void strided_slice(size_t element_size, const std::byte* in, const Shape& shape,
                   std::span<const int64_t> start, std::span<const int64_t> step,
                   const Shape& extent, std::byte* out) {
  if (shape.empty()) {
    std::memcpy(out, in, element_size);
    return;
  }
  if (shape_size(extent) == 0) return;
  const auto typed = [&](auto element) {
    using E = decltype(element);
    strided_slice_typed(reinterpret_cast<const E*>(in), shape, start, step, extent,
                        reinterpret_cast<E*>(out));
  };
  switch (element_size) {
    case 1:
      return typed(uint8_t{});
    case 2:
      return typed(uint16_t{});
    case 4:
      return typed(uint32_t{});
    case 8:
      return typed(uint64_t{});
    case 16:
      return typed(Element<16>{});
    default:
      throw InvalidArgument(fmt::format("strided_slice: elements of {} bytes", element_size));
  }
}

void concatenate(size_t element_size, std::span<const std::byte* const> in,
                 std::span<const Shape> shapes, int axis, std::byte* out) {
  Shape total = shapes[0];
  total[static_cast<size_t>(axis)] = 0;
  for (const Shape& s : shapes) total[static_cast<size_t>(axis)] += s[static_cast<size_t>(axis)];
  visit_layout(element_size, total.size(), [&](auto zero, auto rank) {
    using E = decltype(zero);
    constexpr int N = decltype(rank)::value;
    auto y = out_map<E, N>(out, total);
    Dims<N> offsets{};
    for (size_t k = 0; k < in.size(); ++k) {
      if (shape_size(shapes[k]) == 0) continue;
      assign_sliced<N>(y.slice(offsets, dims_of<N>(shapes[k])), in_map<E, N>(in[k], shapes[k]),
                       shapes[k]);
      offsets[axis] += shapes[k][static_cast<size_t>(axis)];
    }
  });
}

void copy_bytes(const std::byte* in, size_t bytes, std::byte* out) {
  constexpr int64_t kCopyGrain = int64_t{1} << 18;  // bytes per part, at the least
  parallel_for(static_cast<int64_t>(bytes), kCopyGrain, 64, [&](int64_t first, int64_t last) {
    std::memcpy(out + first, in + first, static_cast<size_t>(last - first));
  });
}

void fill_elements(size_t element_size, const std::byte* element, int64_t n, std::byte* out) {
  constexpr int64_t kFillGrain = int64_t{1} << 18;  // bytes per part, at the least
  const auto size = static_cast<int64_t>(element_size);
  parallel_for(n, std::max<int64_t>(1, kFillGrain / std::max<int64_t>(size, 1)), 64,
               [&](int64_t first, int64_t last) {
                 fill_elements_here(element_size, element, last - first, out + first * size);
               });
}

}  // namespace spmd::kernels
