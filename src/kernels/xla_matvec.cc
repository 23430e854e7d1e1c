#include "kernels/xla_matvec.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

namespace spmd::kernels {
namespace {

constexpr int64_t kLanes = 8;  // XLA's vector: eight float32s
constexpr int64_t kTile = 8;   // rows a tile accumulates at once

using Lanes = std::array<float, kLanes>;

// The eight lanes of each of `rows` rows: columns [0, main) by fused multiply-adds, lane l taking
// l mod 8. Two builds, picked when the program loads: x86-64-v3, where std::fma is one instruction
// and the lanes one vector, and the baseline, where std::fma is the C library's exact emulation.
// Both give the same values.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define SPMD_MATVEC_CLONES __attribute__((target_clones("arch=x86-64-v3", "default"), flatten))
#else
#define SPMD_MATVEC_CLONES
#endif
SPMD_MATVEC_CLONES void accumulate_rows(const float* a, int64_t lda, const float* x, int64_t rows,
                                        int64_t main, Lanes* lanes) {
  for (int64_t r = 0; r < rows; ++r) lanes[r].fill(0.0F);
  for (int64_t c = 0; c < main; c += kLanes) {
    for (int64_t r = 0; r < rows; ++r) {
      const float* row = a + r * lda + c;
      for (int64_t l = 0; l < kLanes; ++l) lanes[r][l] = std::fma(row[l], x[c + l], lanes[r][l]);
    }
  }
}

// The same for a full tile, its 64 accumulators held in registers (eight vectors).
SPMD_MATVEC_CLONES void accumulate_tile(const float* a, int64_t lda, const float* x, int64_t main,
                                        Lanes* lanes) {
  float acc[kTile][kLanes] = {};
  for (int64_t c = 0; c < main; c += kLanes) {
#pragma GCC unroll 8
    for (int64_t r = 0; r < kTile; ++r) {
      const float* row = a + r * lda + c;
#pragma GCC unroll 8
      for (int64_t l = 0; l < kLanes; ++l) acc[r][l] = std::fma(row[l], x[c + l], acc[r][l]);
    }
  }
  for (int64_t r = 0; r < kTile; ++r) {
    for (int64_t l = 0; l < kLanes; ++l) lanes[r][l] = acc[r][l];
  }
}

// A full tile's lanes added pairwise: (0 + 1), (2 + 3), … then the pairs' pairs.
float pairwise(Lanes v) {
  for (int64_t width = kLanes; width > 1; width /= 2) {
    for (int64_t l = 0; l < width / 2; ++l) v[l] = v[2 * l] + v[2 * l + 1];
  }
  return v[0];
}

// A leftover row's lanes added by halves: l + (l + 4), then + 2, + 1.
float by_halves(Lanes v) {
  for (int64_t width = kLanes; width > 1; width /= 2) {
    for (int64_t l = 0; l < width / 2; ++l) v[l] = v[l] + v[l + width / 2];
  }
  return v[0];
}

// The last columns [main, k) of one row, by fused multiply-adds from zero.
float tail(const float* row, const float* x, int64_t main, int64_t k) {
  float t = 0.0F;
  for (int64_t j = main; j < k; ++j) t = std::fma(row[j], x[j], t);
  return t;
}

}  // namespace

void xla_matvec_rows(const float* a, int64_t lda, const float* x, int64_t incx, int64_t m,
                     int64_t k, int64_t r0, int64_t r1, float* out, int64_t ldo) {
  std::vector<float> packed;
  if (incx != 1) {
    packed.resize(static_cast<size_t>(k));
    for (int64_t j = 0; j < k; ++j) packed[static_cast<size_t>(j)] = x[j * incx];
    x = packed.data();
  }
  const int64_t main = k - k % kLanes;
  const int64_t full_rows = m - m % kTile;
  std::array<Lanes, kTile> lanes{};
  for (int64_t t0 = r0; t0 < r1; t0 += kTile) {
    const int64_t rows = std::min(kTile, r1 - t0);
    if (rows == kTile) {
      accumulate_tile(a + t0 * lda, lda, x, main, lanes.data());
    } else {
      accumulate_rows(a + t0 * lda, lda, x, rows, main, lanes.data());
    }
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t i = t0 + r;
      const float t = tail(a + i * lda, x, main, k);
      const float s = i < full_rows ? pairwise(lanes[r]) : by_halves(lanes[r]);
      out[i * ldo] = main == 0 ? t : main == k ? s : s + t;
    }
  }
}

}  // namespace spmd::kernels
