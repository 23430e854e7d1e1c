// Dense factorizations of batches of matrices, by OpenBLAS's LAPACK: potrf, and geqrf then
// orgqr, the routines jnp.linalg.cholesky and qr call in JAX (through SciPy's LAPACK, an OpenBLAS
// too), on the same column-major copies. Each call runs on one thread (blas_calls.h), and so
// gives JAX's values bit for bit wherever JAX's OpenBLAS runs the routine on one thread as well
// (below about 256 rows on the 2-core machines of bench/RESULTS.md; beyond, its threads split
// the blocked updates and its last bits depend on the machine's core count, as JAX's own do).
// float32 and float64; row-major matrices, one after another. Thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>

#include "spmd/dtype.h"

namespace spmd::kernels {

// Whether cholesky and qr take `dtype`: float32 and float64.
bool factorizable(DType dtype);

// The lower Cholesky factor L (L Lᵀ = a, zeros above the diagonal) of each of `batch` n×n
// matrices, from their lower triangles (as potrf reads them); a matrix that is not positive
// definite gives NaN on and below the diagonal, as JAX's cholesky does.
void cholesky(DType dtype, const std::byte* in, int64_t batch, int64_t n, std::byte* out);

// The reduced QR decomposition of each of `batch` m×n matrices: Q (m×k, orthonormal columns) at
// `q` and R (k×n, upper triangular) at `r`, k = min(m, n).
void qr(DType dtype, const std::byte* in, int64_t batch, int64_t m, int64_t n, std::byte* q,
        std::byte* r);

// Which system triangular_solve solves, as jax.lax.linalg.triangular_solve's flags say: op(a) x
// = b (left_side) or x op(a) = b, op(a) = a or aᵀ (transpose_a), a's lower or upper triangle
// read (the other ignored), its diagonal taken as ones when unit_diagonal.
struct TriangularSolve {
  bool left_side = false;
  bool lower = false;
  bool transpose_a = false;
  bool unit_diagonal = false;
};

// x for each of `batch` systems: b and x m×n, a m×m (left_side) or n×n. BLAS's trsm, as JAX's
// CPU backend calls it, on column-major copies.
void triangular_solve(DType dtype, const std::byte* a, const std::byte* b, int64_t batch, int64_t m,
                      int64_t n, TriangularSolve how, std::byte* out);

}  // namespace spmd::kernels
