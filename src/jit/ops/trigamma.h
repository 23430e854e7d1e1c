// ψ'(x), the trigamma function, as digamma's derivative (jit's vjp of kernels::Unary::kDigamma):
// the derivative of the very formula the digamma kernel computes (xla_special.h), Lanczos' sum
// with g = 7 and Euler's reflection below 1/2, written out as traced operations so that it has
// derivatives of its own. JAX differentiates digamma with polygamma(1, x), XLA's Hurwitz zeta
// series; the two agree to a few units in the last place where both converge.
#pragma once

#include "spmd/tensor.h"

namespace spmd::compiler {

// ψ'(x) for a floating x: NaN at the poles 0, -1, -2, … and at -inf, 0 at +inf. The half types
// are computed in float32 and rounded once, as the digamma kernel computes them.
Tensor trigamma(const Tensor& x);

}  // namespace spmd::compiler
