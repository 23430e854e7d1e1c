// spmd::numpy::linalg: jnp.linalg's factorizations, of the matrices in an array's last two
// dimensions (the leading ones a batch, each keeping its split across devices; each matrix whole
// on its device). OpenBLAS's LAPACK on CPU, the routines JAX calls: JAX's values bit for bit
// where both run them on one thread (up to about 200 rows). cholesky, qr and triangular_solve
// differentiate by JAX's rules.
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

namespace spmd::lax::linalg {

// Which system triangular_solve solves (jax.lax.linalg.triangular_solve's flags): op(a) x = b
// with left_side, else x op(a) = b; op(a) is aᵀ with transpose_a; only a's lower (or upper)
// triangle is read, its diagonal taken as ones with unit_diagonal.
struct TriangularSolveOptions {
  bool left_side = false;
  bool lower = false;
  bool transpose_a = false;
  bool unit_diagonal = false;
};

// x for each matrix of a (…, k, k) and b (…, m, n) with the same batch dimensions, k = m
// (left_side) or n; BLAS's trsm. Bool and integer operands in the default float; float16 and
// bfloat16 solved in float32 and rounded once. Differentiable in both operands.
Tensor triangular_solve(const Tensor& a, const Tensor& b,
                        const TriangularSolveOptions& options = {});

}  // namespace spmd::lax::linalg
