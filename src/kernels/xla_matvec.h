// A float32 matrix-vector product in the order XLA's CPU backend sums it, so that `A @ x` (and
// jax.random.multivariate_normal of one draw) gives JAX 0.10.2's bits.
//
// XLA emits a dot of a row-major (m × k) matrix and a k-vector, m ≥ 2, as its own tiled loop
// (not YNNPACK's, which takes matrix products): rows in tiles of eight, each row's first
// k - k % 8 products accumulated by fused multiply-adds into eight lanes (lane l takes columns
// l, l + 8, …); a full tile's lanes are then added pairwise (l + (l + 1), then the pairs' pairs:
// the order of its 8 × 8 transpose-and-add), a leftover row's (the last m % 8) by halves (l + (l
// + 4), then + 2, + 1); the last k % 8 columns are summed apart, by fused multiply-adds from
// zero in order, and added to the lanes' sum at the end (alone, where k < 8). Read from JAX's
// results: every value equal on 64 random shapes (m < 40, k < 300, and up to 10,000 × 16 and
// 4,096 × 512), and on batches of matrices, each with its own vector.
//
// Pure; each row's bits depend on its own row and tile alone, so the rows may be split over
// threads at multiples of eight (matmul.cc does, on the team). Internal to kernels/.
#pragma once

#include <cstdint>

namespace spmd::kernels {

// out[i * ldo] = Σ_j a[i * lda + j] · x[j * incx] for rows [r0, r1) of an (m × k) matrix, in
// XLA's order (above); r0 is a multiple of 8 and r1 either one or m.
void xla_matvec_rows(const float* a, int64_t lda, const float* x, int64_t incx, int64_t m,
                     int64_t k, int64_t r0, int64_t r1, float* out, int64_t ldo);

}  // namespace spmd::kernels
