#include "kernels/tile_transpose.h"

#include <algorithm>
#include <cstring>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define SPMD_TILE_TRANSPOSE_AVX2 1
#endif

namespace spmd::kernels {
namespace {

// out[j][i] = in[i][j] for i in [i0, i1), j in [j0, j1), one element at a time.
void transpose_elements(size_t size, const std::byte* in, int64_t rows, int64_t cols, int64_t i0,
                        int64_t i1, int64_t j0, int64_t j1, std::byte* out) {
  const auto s = static_cast<int64_t>(size);
  for (int64_t j = j0; j < j1; ++j) {
    for (int64_t i = i0; i < i1; ++i)
      std::memcpy(out + (j * rows + i) * s, in + (i * cols + j) * s, size);
  }
}

#ifdef SPMD_TILE_TRANSPOSE_AVX2
// An 8 × 8 tile of 4-byte elements: rows `is` elements apart in, `os` apart out.
[[gnu::target("avx2")]] void tile8(const std::byte* in, int64_t is, std::byte* out, int64_t os) {
  __m256i r[8];
  for (int k = 0; k < 8; ++k) {
    r[k] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + k * is * 4));
  }
  __m256i t[8];
  for (int k = 0; k < 8; k += 2) {
    t[k] = _mm256_unpacklo_epi32(r[k], r[k + 1]);      // a0 b0 a1 b1 | a4 b4 a5 b5
    t[k + 1] = _mm256_unpackhi_epi32(r[k], r[k + 1]);  // a2 b2 a3 b3 | a6 b6 a7 b7
  }
  __m256i u[8];
  for (int k = 0; k < 8; k += 4) {
    u[k] = _mm256_unpacklo_epi64(t[k], t[k + 2]);      // a0 b0 c0 d0 | a4 b4 c4 d4
    u[k + 1] = _mm256_unpackhi_epi64(t[k], t[k + 2]);  // column 1 | column 5
    u[k + 2] = _mm256_unpacklo_epi64(t[k + 1], t[k + 3]);
    u[k + 3] = _mm256_unpackhi_epi64(t[k + 1], t[k + 3]);
  }
  for (int k = 0; k < 4; ++k) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + k * os * 4),
                        _mm256_permute2x128_si256(u[k], u[k + 4], 0x20));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + (k + 4) * os * 4),
                        _mm256_permute2x128_si256(u[k], u[k + 4], 0x31));
  }
}

// A 4 × 4 tile of 8-byte elements.
[[gnu::target("avx2")]] void tile4(const std::byte* in, int64_t is, std::byte* out, int64_t os) {
  __m256i r[4];
  for (int k = 0; k < 4; ++k) {
    r[k] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + k * is * 8));
  }
  const __m256i t0 = _mm256_unpacklo_epi64(r[0], r[1]);  // a0 b0 | a2 b2
  const __m256i t1 = _mm256_unpackhi_epi64(r[0], r[1]);  // a1 b1 | a3 b3
  const __m256i t2 = _mm256_unpacklo_epi64(r[2], r[3]);  // c0 d0 | c2 d2
  const __m256i t3 = _mm256_unpackhi_epi64(r[2], r[3]);  // c1 d1 | c3 d3
  const __m256i cols[4] = {
      _mm256_permute2x128_si256(t0, t2, 0x20), _mm256_permute2x128_si256(t1, t3, 0x20),
      _mm256_permute2x128_si256(t0, t2, 0x31), _mm256_permute2x128_si256(t1, t3, 0x31)};
  for (int k = 0; k < 4; ++k) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + k * os * 8), cols[k]);
  }
}

// transpose_rows for elements of kSize bytes (4: tiles of 8 × 8; 8: of 4 × 4).
template <int64_t kSize>
[[gnu::target("avx2")]] void rows_in_blocks(const std::byte* in, int64_t rows, int64_t cols,
                                            int64_t first, int64_t last, std::byte* out) {
  constexpr int64_t kTile = kSize == 4 ? 8 : 4;
  for (int64_t i0 = first; i0 < last; i0 += kTransposeBlock) {
    const int64_t i1 = std::min(i0 + kTransposeBlock, last);
    const int64_t whole_i = i0 + (i1 - i0) / kTile * kTile;
    for (int64_t j0 = 0; j0 < cols; j0 += kTransposeBlock) {
      const int64_t j1 = std::min(j0 + kTransposeBlock, cols);
      const int64_t whole_j = j0 + (j1 - j0) / kTile * kTile;
      for (int64_t j = j0; j < whole_j; j += kTile) {
        for (int64_t i = i0; i < whole_i; i += kTile) {
          const std::byte* from = in + (i * cols + j) * kSize;
          std::byte* to = out + (j * rows + i) * kSize;
          kSize == 4 ? tile8(from, cols, to, rows) : tile4(from, cols, to, rows);
        }
      }
      transpose_elements(kSize, in, rows, cols, whole_i, i1, j0, j1, out);
      transpose_elements(kSize, in, rows, cols, i0, whole_i, whole_j, j1, out);
    }
  }
}

bool avx2_here() {
  static const bool avx2 = __builtin_cpu_supports("avx2");
  return avx2;
}
#endif

}  // namespace

bool register_transpose_takes(size_t element_size) {
#ifdef SPMD_TILE_TRANSPOSE_AVX2
  return (element_size == 4 || element_size == 8) && avx2_here();
#else
  (void)element_size;
  return false;
#endif
}

void transpose_rows(size_t element_size, const std::byte* in, int64_t rows, int64_t cols,
                    int64_t first, int64_t last, std::byte* out) {
#ifdef SPMD_TILE_TRANSPOSE_AVX2
  if (register_transpose_takes(element_size)) {
    if (element_size == 4) return rows_in_blocks<4>(in, rows, cols, first, last, out);
    return rows_in_blocks<8>(in, rows, cols, first, last, out);
  }
#endif
  transpose_rows_portable(element_size, in, rows, cols, first, last, out);
}

void transpose_rows_portable(size_t element_size, const std::byte* in, int64_t rows, int64_t cols,
                             int64_t first, int64_t last, std::byte* out) {
  transpose_elements(element_size, in, rows, cols, first, last, 0, cols, out);
}

}  // namespace spmd::kernels
