#include "kernels/matmul.h"

#include <cblas.h>
#include <fmt/format.h>

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <type_traits>
#include <vector>

#include "kernels/blas_calls.h"
#include "kernels/dispatch.h"
#include "kernels/half_convert.h"
#include "kernels/sgemm.h"
#include "kernels/thread_team.h"
#include "kernels/xla_matvec.h"
#include "kernels/xla_sum.h"
#include "spmd/error.h"

namespace spmd::kernels {
namespace {

template <class T>
using Matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// float32: oneDNN's or OpenBLAS's (sgemm.h); float64: OpenBLAS's.
void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
          const float* b, int64_t ldb, float* c, int64_t ldc) {
  sgemm(ta, tb, m, n, k, a, lda, b, ldb, c, ldc);
}

void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const double* a, int64_t lda,
          const double* b, int64_t ldb, double* c, int64_t ldc) {
  cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
              static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), 1.0, a,
              static_cast<int>(lda), b, static_cast<int>(ldb), 0.0, c, static_cast<int>(ldc));
}

// How a large product is cut: into tiles of c, each one single-threaded sgemm call, which the
// team takes in turn. The cut depends on the shape alone, never on the team: OpenBLAS rounds
// differently at different tile edges (a 256 × 2048 × 2048 product cut in two columns differed
// from the uncut one in 17520 of its 524288 values), and so does oneDNN for some shapes, so a
// cut chosen by the team's size would make a product's bits depend on the cores it ran on. Cut
// by shape, a product has the same bits on every team; the team only takes the tiles in turn.
//
// Most products are cut one way (one_way_cut): whole columns of c (a panel of b, a repacked
// whole by each call) or whole rows (a panel of a, b repacked), whichever repacks the smaller
// operand, in panels of at least kPanel and kMinPanelWork multiply-adds. Panels are kPanel
// wide, or kNarrowPanel where the extent is under two kPanels, so that a product of 256 to 511
// columns (or rows) is still cut: a 256 × 256 × 256 product was one call, on one core, and eight
// blocks of it with their gradients took 12.1 ms against JAX's 5.5; cut in two, 5.6.
//
// A product large both ways (both_ways_cut: m and n at least kTiledExtent, and kTiledWork
// multiply-adds) is cut into tiles of rows and columns at once, since a panel of whole columns
// there repacks a whole operand of at least kTiledExtent rows in every call: an MLP's weight
// gradient, 2048 × 2048 × 256 with a transposed, ran at 425-434 GFLOP/s in 256-wide column
// panels on the 2-core AVX-512 machine, and at 490-507 in eight tiles of 512 × 1024 (2048^3:
// 480-497, then 501-503). The tiles are the squarest (the least repacking for their
// multiply-adds) of those at least kPanel wide whose count reaches `wanted`: one per kTileWork
// multiply-adds, at least kFewestTiles (a team of 8 cores stays busy, as under the one-way cut)
// and at most kMostTiles. More, smaller tiles cost more than they spread: 64 tiles of 256 × 256
// took 2048^3 to 453-458 GFLOP/s.
constexpr int64_t kPanel = 256;
constexpr int64_t kNarrowPanel = 128;
constexpr int64_t kMinPanelWork = int64_t{1} << 20;
constexpr int64_t kTiledExtent = 1024;
constexpr int64_t kTiledWork = int64_t{1} << 28;
constexpr int64_t kTileWork = int64_t{1} << 30;
constexpr int64_t kFewestTiles = 8;
constexpr int64_t kMostTiles = 64;

int64_t work_of(const MatmulShape& s) { return s.m * s.n * std::max<int64_t>(s.k, 1); }

ProductCut one_way_cut(const MatmulShape& s) {
  const int64_t work = work_of(s);
  const bool by_rows = s.m > s.n;
  const int64_t extent = by_rows ? s.m : s.n;
  int64_t width = extent;
  if (work >= 2 * kMinPanelWork) {  // else one call: waking a helper would cost more
    const int64_t least = (kMinPanelWork * extent / work + 63) / 64 * 64;
    width = std::min(extent, std::max(extent < 2 * kPanel ? kNarrowPanel : kPanel, least));
  }
  return by_rows ? ProductCut{.rows = width, .cols = s.n} : ProductCut{.rows = s.m, .cols = width};
}

// Tile widths along an extent: the whole extent, and kPanel doubled while under it.
std::vector<int64_t> tile_widths(int64_t extent) {
  std::vector<int64_t> widths{extent};
  for (int64_t w = kPanel; w < extent; w *= 2) widths.push_back(w);
  return widths;
}

ProductCut both_ways_cut(const MatmulShape& s) {
  const int64_t wanted = std::clamp(work_of(s) / kTileWork, kFewestTiles, kMostTiles);
  ProductCut best{.rows = kPanel, .cols = kPanel};  // the most tiles, where none reach `wanted`
  double best_cost = 0;
  for (int64_t rows : tile_widths(s.m)) {
    for (int64_t cols : tile_widths(s.n)) {
      const ProductCut c{.rows = rows, .cols = cols};
      const double cost = 1.0 / double(rows) + 1.0 / double(cols);  // repacked per multiply-add
      const bool better = best_cost == 0 || cost < best_cost ||
                          (cost == best_cost && cols > best.cols);  // ties: the wider columns
      if (c.tiles(s) >= wanted && better) best = c, best_cost = cost;
    }
  }
  return best;
}

// One row-major product of `s` (no batch): rows [r0, r1) of c from the same rows of a, or
// columns [c0, c1) of c from the same columns of b.
template <class T>
void product_part(const T* a, const T* b, T* c, const MatmulShape& s, int64_t r0, int64_t r1,
                  int64_t c0, int64_t c1) {
  const int64_t lda = leading_a(s), ldb = leading_b(s), ldc = leading_c(s);
  const T* a_rows = s.transpose_a ? a + r0 : a + r0 * lda;
  const T* b_cols = s.transpose_b ? b + c0 * ldb : b + c0;
  gemm(s.transpose_a, s.transpose_b, r1 - r0, c1 - c0, s.k, a_rows, std::max<int64_t>(lda, 1),
       b_cols, std::max<int64_t>(ldb, 1), c + r0 * ldc + c0, std::max<int64_t>(ldc, 1));
}

// Every product of the batch, cut as product_cut says, the team taking (product, tile) pairs in
// turn: many small products go out whole in groups, a large one in tiles.
template <class T>
void blas(const T* a, const T* b, T* c, const MatmulShape& s) {
  BlasCalls::get().run([&] {
    const ProductCut cut = product_cut(s);
    const int64_t tiles = cut.tiles(s), row_tiles = (s.m + cut.rows - 1) / cut.rows;
    const int64_t work = work_of(s);
    const int64_t grain =
        tiles > 1 ? 1 : std::max<int64_t>(1, kMinPanelWork / std::max<int64_t>(work, 1));
    parallel_for(s.batch * tiles, grain, 1, [&](int64_t first, int64_t last) {
      for (int64_t at = first; at < last; ++at) {
        const MatmulOffsets o = member_offsets(s, at / tiles);
        const int64_t tile = at % tiles;
        const int64_t r0 = tile % row_tiles * cut.rows, c0 = tile / row_tiles * cut.cols;
        product_part(a + o.a, b + o.b, c + o.out, s, r0, std::min(r0 + cut.rows, s.m), c0,
                     std::min(c0 + cut.cols, s.n));
      }
    });
  });
}

template <class T>
void eigen_product(const T* a, const T* b, T* c, MatmulShape s) {
  for (int64_t i = 0; i < s.batch; ++i) {
    const Eigen::Map<const Matrix<T>> xs(a + i * s.m * s.k, s.transpose_a ? s.k : s.m,
                                         s.transpose_a ? s.m : s.k);
    const Eigen::Map<const Matrix<T>> ys(b + i * s.k * s.n, s.transpose_b ? s.n : s.k,
                                         s.transpose_b ? s.k : s.n);
    const Matrix<T> x = s.transpose_a ? Matrix<T>(xs.transpose()) : Matrix<T>(xs);
    const Matrix<T> y = s.transpose_b ? Matrix<T>(ys.transpose()) : Matrix<T>(ys);
    Eigen::Map<Matrix<T>> z(c + i * s.m * s.n, s.m, s.n);
    if constexpr (std::is_same_v<T, bool>) {
      z = (x.template cast<int32_t>() * y.template cast<int32_t>()).array() != 0;
    } else {
      z.noalias() = x * y;
    }
  }
}

}  // namespace

int64_t leading_a(const MatmulShape& s) { return s.lda != 0 ? s.lda : s.transpose_a ? s.m : s.k; }
int64_t leading_b(const MatmulShape& s) { return s.ldb != 0 ? s.ldb : s.transpose_b ? s.k : s.n; }
int64_t leading_c(const MatmulShape& s) { return s.ldc != 0 ? s.ldc : s.n; }

bool is_packed(const MatmulShape& s) {
  return s.batch_dims.empty() && leading_a(s) == (s.transpose_a ? s.m : s.k) &&
         leading_b(s) == (s.transpose_b ? s.k : s.n) && leading_c(s) == s.n;
}

int64_t ProductCut::tiles(const MatmulShape& s) const {
  if (rows <= 0 || cols <= 0) return 1;
  return (s.m + rows - 1) / rows * ((s.n + cols - 1) / cols);
}

ProductCut product_cut(const MatmulShape& s) {
  const bool large = std::min(s.m, s.n) >= kTiledExtent && work_of(s) >= kTiledWork;
  return large ? both_ways_cut(s) : one_way_cut(s);
}

MatmulOffsets member_offsets(const MatmulShape& s, int64_t i) {
  if (s.batch_dims.empty()) {
    return {i * (s.transpose_a ? s.k : s.m) * leading_a(s),
            i * (s.transpose_b ? s.n : s.k) * leading_b(s), i * s.m * leading_c(s)};
  }
  MatmulOffsets o;
  for (auto d = s.batch_dims.rbegin(); d != s.batch_dims.rend(); ++d) {
    const int64_t at = i % d->size;
    i /= d->size;
    o.a += at * d->a;
    o.b += at * d->b;
    o.out += at * d->out;
  }
  return o;
}

namespace {

void check(const MatmulShape& s) {
  constexpr int64_t kBlasMax = 0x7fffffff;
  if (s.m > kBlasMax || s.n > kBlasMax || s.k > kBlasMax || leading_a(s) > kBlasMax ||
      leading_b(s) > kBlasMax || leading_c(s) > kBlasMax) {
    throw InvalidArgument(
        fmt::format("matmul: ({} × {}) · ({} × {}) has a dimension past "
                    "CBLAS's int range",
                    s.m, s.k, s.k, s.n));
  }
  int64_t members = 1;
  for (const MatmulBatchDim& d : s.batch_dims) members *= d.size;
  if (!s.batch_dims.empty() && members != s.batch) {
    throw InvalidArgument(
        fmt::format("matmul: batch dimensions of {} members for a batch of {}", members, s.batch));
  }
}

// Copies `rows` rows of `cols` elements, each `ld` apart, of every member (at `offset(i)`) from
// `in` (gather) into consecutive packed matrices, or back (scatter).
template <class Offset>
void repack(size_t width, int64_t batch, int64_t rows, int64_t cols, int64_t ld, Offset offset,
            const std::byte* from, std::byte* to, bool gather) {
  const auto bytes = static_cast<size_t>(cols) * width;
  for (int64_t i = 0; i < batch; ++i) {
    const int64_t member = offset(i);
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t strided = (member + r * ld) * static_cast<int64_t>(width);
      const int64_t packed = (i * rows + r) * cols * static_cast<int64_t>(width);
      if (gather) {
        std::memcpy(to + packed, from + strided, bytes);
      } else {
        std::memcpy(to + strided, from + packed, bytes);
      }
    }
  }
}

// A half-type product runs in float32 (dispatch.h): its operands widened and its result rounded
// by the team in parts of at least this many elements, into buffers that are not zeroed first
// (they are written whole before they are read).
constexpr int64_t kConvertGrain = int64_t{1} << 16;

std::unique_ptr<float[]> widened(DType dtype, const std::byte* in, int64_t n) {
  std::unique_ptr<float[]> wide(new float[static_cast<size_t>(n)]);
  parallel_for(n, kConvertGrain, 64, [&](int64_t first, int64_t last) {
    widen_half(dtype, in + first * 2, wide.get() + first, last - first);
  });
  return wide;
}

// An integer product through a float GEMM where every partial sum is an integer the float holds
// exactly: k · max|a| · max|b| at most 2^24 (float32, on oneDNN's or OpenBLAS's sgemm) or under
// 2^53 (float64). Then whatever order the GEMM sums in, each sum is the exact integer, and its
// value modulo the type's range is what the type's own wrapping arithmetic gives (XLA's, and
// eigen_product's below): the same values, bit for bit. Eigen multiplies integers in this
// library's baseline build (SSE2, no 32-bit lane product), on one core: an int32 1024³ took 148
// ms against JAX's 23 (session 70); through sgemm, 8.7 ms.
constexpr double kExactFloat = double(int64_t{1} << 24);
constexpr double kExactDouble = double(int64_t{1} << 53);

template <class T>
uint64_t max_magnitude(const T* x, int64_t n) {
  std::mutex mu;
  uint64_t most = 0;
  parallel_for(n, kConvertGrain, 64, [&](int64_t first, int64_t last) {
    uint64_t m = 0;
    for (int64_t i = first; i < last; ++i) {
      // int8's values sign-extended, as wanted.
      const auto v = static_cast<int64_t>(x[i]);  // NOLINT(bugprone-signed-char-misuse)
      const uint64_t magnitude =
          std::is_signed_v<T> && v < 0 ? uint64_t(0) - uint64_t(v) : uint64_t(x[i]);
      m = std::max(m, magnitude);
    }
    const std::lock_guard lock(mu);
    most = std::max(most, m);
  });
  return most;
}

template <class F, class T>
std::unique_ptr<F[]> as_float(const T* x, int64_t n) {
  std::unique_ptr<F[]> wide(new F[static_cast<size_t>(n)]);
  parallel_for(n, kConvertGrain, 64, [&](int64_t first, int64_t last) {
    for (int64_t i = first; i < last; ++i) wide[i] = static_cast<F>(x[i]);
  });
  return wide;
}

template <class F, class T>
void exact_product(const T* a, const T* b, T* c, const MatmulShape& s) {
  const std::unique_ptr<F[]> x = as_float<F>(a, s.batch * s.m * s.k);
  const std::unique_ptr<F[]> y = as_float<F>(b, s.batch * s.k * s.n);
  const std::unique_ptr<F[]> z(new F[static_cast<size_t>(s.batch * s.m * s.n)]);
  blas(x.get(), y.get(), z.get(), s);
  parallel_for(s.batch * s.m * s.n, kConvertGrain, 64, [&](int64_t first, int64_t last) {
    // Exact integers within int64's range; the narrowing wraps (modular since C++20).
    for (int64_t i = first; i < last; ++i) c[i] = static_cast<T>(static_cast<int64_t>(z[i]));
  });
}

// The packed integer product through float32 or float64 where exact (above); false, nothing
// written, where a sum could pass 2^53.
template <class T>
bool through_float(const T* a, const T* b, T* c, const MatmulShape& s) {
  const auto na = static_cast<double>(max_magnitude(a, s.batch * s.m * s.k));
  const auto nb = static_cast<double>(max_magnitude(b, s.batch * s.k * s.n));
  // Exact while under 2^53; from there rounding (monotone) keeps it at 2^53 or above.
  const double bound = double(s.k) * na * nb;
  if (bound <= kExactFloat) {
    exact_product<float>(a, b, c, s);
  } else if (bound < kExactDouble) {
    exact_product<double>(a, b, c, s);
  } else {
    return false;
  }
  return true;
}

// A strided product of a dtype BLAS does not take: the operands gathered into packed copies, the
// packed product, its result scattered into place.
void through_packed(DType dtype, const MatmulShape& s, const std::byte* a, const std::byte* b,
                    std::byte* out) {
  const size_t width = dtype_size(dtype);
  MatmulShape packed{.batch = s.batch,
                     .m = s.m,
                     .k = s.k,
                     .n = s.n,
                     .transpose_a = s.transpose_a,
                     .transpose_b = s.transpose_b};
  std::vector<std::byte> x(static_cast<size_t>(s.batch * s.m * s.k) * width);
  std::vector<std::byte> y(static_cast<size_t>(s.batch * s.k * s.n) * width);
  std::vector<std::byte> z(static_cast<size_t>(s.batch * s.m * s.n) * width);
  const auto at = [&](int64_t i) { return member_offsets(s, i); };
  repack(
      width, s.batch, s.transpose_a ? s.k : s.m, s.transpose_a ? s.m : s.k, leading_a(s),
      [&](int64_t i) { return at(i).a; }, a, x.data(), true);
  repack(
      width, s.batch, s.transpose_b ? s.n : s.k, s.transpose_b ? s.k : s.n, leading_b(s),
      [&](int64_t i) { return at(i).b; }, b, y.data(), true);
  matmul(dtype, packed, x.data(), y.data(), z.data());
  repack(
      width, s.batch, s.m, s.n, leading_c(s), [&](int64_t i) { return at(i).out; }, z.data(), out,
      false);
}

// A float32 matrix times a vector (n = 1, m ≥ 2, a's rows in place): XLA's own loop sums it,
// not a GEMM, and in its order (xla_matvec.h), so spmd's values are JAX's. Memory-bound: the
// team takes tiles of eight rows of every member in turn (a row's bits depend on its tile alone).
bool is_xla_matvec(const MatmulShape& s) { return s.n == 1 && s.m >= 2 && !s.transpose_a; }

constexpr int64_t kMatvecGrain = int64_t{1} << 15;  // multiply-adds a part takes at least

void xla_matvecs(const float* a, const float* b, float* c, const MatmulShape& s) {
  const int64_t lda = leading_a(s), ldc = leading_c(s);
  const int64_t incx = s.transpose_b ? 1 : leading_b(s);
  const int64_t tiles = (s.m + 7) / 8;
  const int64_t grain = std::max<int64_t>(1, kMatvecGrain / std::max<int64_t>(8 * s.k, 1));
  parallel_for(s.batch * tiles, grain, 1, [&](int64_t first, int64_t last) {
    for (int64_t at = first; at < last;) {
      const int64_t member = at / tiles, t0 = at % tiles;
      const int64_t t1 = std::min(tiles, t0 + (last - at));
      const MatmulOffsets o = member_offsets(s, member);
      xla_matvec_rows(a + o.a, lda, b + o.b, incx, s.m, s.k, t0 * 8, std::min(s.m, t1 * 8),
                      c + o.out, ldc);
      at += t1 - t0;
    }
  });
}

// A float32 dot of two vectors (m = n = 1) as XLA computes it, so that spmd's is JAX's: up to
// kFusedDot elements, fused multiply-adds in order from +0 (its own loop); longer, XLA rewrites
// the dot into the rounded products and their sum (xla_sum.h, its order set by the batch's
// k · batch products). Read from jax.jit(jnp.dot)'s values on 20 pairs of each length to 40.
constexpr int64_t kFusedDot = 32;

bool is_xla_vector_dot(const MatmulShape& s) { return s.m == 1 && s.n == 1; }

void xla_vector_dots(const float* a, const float* b, float* c, const MatmulShape& s) {
  const int64_t a_step = s.transpose_a ? leading_a(s) : 1;
  const int64_t b_step = s.transpose_b ? 1 : leading_b(s);
  const int64_t grain = std::max<int64_t>(1, kMatvecGrain / std::max<int64_t>(s.k, 1));
  parallel_for(s.batch, grain, 1, [&](int64_t first, int64_t last) {
    std::vector<float> products(static_cast<size_t>(s.k > kFusedDot ? s.k : 0));
    for (int64_t i = first; i < last; ++i) {
      const MatmulOffsets o = member_offsets(s, i);
      const float* x = a + o.a;
      const float* y = b + o.b;
      if (s.k <= kFusedDot) {
        float sum = 0.0F;
        for (int64_t j = 0; j < s.k; ++j) sum = std::fma(x[j * a_step], y[j * b_step], sum);
        c[o.out] = sum;
        continue;
      }
      for (int64_t j = 0; j < s.k; ++j) {
        products[static_cast<size_t>(j)] = x[j * a_step] * y[j * b_step];
      }
      c[o.out] = xla_row_sum(products.data(), s.k, s.batch * s.k);
    }
  });
}

}  // namespace

void matmul(DType dtype, MatmulShape s, const std::byte* a, const std::byte* b, std::byte* out) {
  check(s);
  if (s.m * s.n == 0 || s.batch == 0) return;
  if (dtype == DType::kFloat32 && is_xla_vector_dot(s)) {
    return xla_vector_dots(reinterpret_cast<const float*>(a), reinterpret_cast<const float*>(b),
                           reinterpret_cast<float*>(out), s);
  }
  if (dtype == DType::kFloat32 && is_xla_matvec(s)) {
    return xla_matvecs(reinterpret_cast<const float*>(a), reinterpret_cast<const float*>(b),
                       reinterpret_cast<float*>(out), s);
  }
  const bool blas_dtype = dtype == DType::kFloat32 || dtype == DType::kFloat64;
  if (!blas_dtype && !is_packed(s)) return through_packed(dtype, s, a, b, out);
  if (is_half_dtype(dtype)) {
    const std::unique_ptr<float[]> x = widened(dtype, a, s.batch * s.m * s.k);
    const std::unique_ptr<float[]> y = widened(dtype, b, s.batch * s.k * s.n);
    const std::unique_ptr<float[]> z(new float[static_cast<size_t>(s.batch * s.m * s.n)]);
    blas(x.get(), y.get(), z.get(), s);
    parallel_for(s.batch * s.m * s.n, kConvertGrain, 64, [&](int64_t first, int64_t last) {
      narrow_half(dtype, z.get() + first, out + first * 2, last - first);
    });
    return;
  }
  visit_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    const auto* x = reinterpret_cast<const T*>(a);
    const auto* y = reinterpret_cast<const T*>(b);
    auto* z = reinterpret_cast<T*>(out);
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      blas(x, y, z, s);
    } else if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      if (!through_float(x, y, z, s)) eigen_product(x, y, z, s);
    } else if constexpr (!is_half<T>) {
      eigen_product(x, y, z, s);
    }
  });
}

}  // namespace spmd::kernels
