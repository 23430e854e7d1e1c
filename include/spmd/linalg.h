// spmd::numpy::linalg: jnp.linalg's factorizations, of the matrices in an array's last two
// dimensions (the leading ones a batch, each keeping its split across devices; each matrix whole
// on its device). Eigen's LLT and HouseholderQR on CPU, the algorithms of JAX's LAPACK calls, so
// the values are within a few units in the last place of JAX's. No derivatives yet.
#pragma once

#include <utility>

#include "spmd/tensor.h"

namespace spmd::numpy::linalg {

// jnp.linalg.cholesky: each matrix's lower Cholesky factor L (L Lᵀ = a), from a symmetrized,
// (a + aᵀ) / 2, as JAX's symmetrize_input; upper gives Lᵀ. A matrix that is not positive definite
// gives NaN on and below the diagonal, as JAX's. Bool and integer matrices in the default float;
// float16 and bfloat16 factored in float32 and rounded once.
Tensor cholesky(const Tensor& a, bool upper = false);

// jnp.linalg.qr(a) (mode "reduced"): Q with orthonormal columns (…, m, k) and upper-triangular R
// (…, k, n), k = min(m, n), by Householder reflections of LAPACK's sign convention.
std::pair<Tensor, Tensor> qr(const Tensor& a);

}  // namespace spmd::numpy::linalg
