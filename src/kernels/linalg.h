// Dense factorizations of batches of small matrices, by Eigen 3.4 (its LLT and HouseholderQR):
// what jnp.linalg.cholesky and qr compute with LAPACK's potrf and geqrf/orgqr in JAX, the same
// algorithms (Householder reflections of LAPACK's sign convention), within a few units in the
// last place. float32 and float64; row-major matrices, one after another. Pure; thread-safe.
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

}  // namespace spmd::kernels
