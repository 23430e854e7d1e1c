// Uniform floating-point chains on a GPU (scalar_chain.h's is_uniform_float, at most 8 per-element
// steps): the launch of chain_kernel.cu's fast path. Each dtype's kernels are instantiated in
// their own file (chain_uniform_f32.cu, chain_uniform_f64.cu, chain_uniform_bf16.cu,
// chain_uniform_f16.cu), so that nvcc compiles the four in parallel: in one file they were the
// longest compile of the build. Private to src/kernels/cuda.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/scalar_chain.h"
#include "spmd/dtype.h"

namespace spmd::kernels::cuda {

// Whether the uniform kernels expand a per-element step of `op` in place, the operation a
// constant: the arithmetic and the functions of a few instructions (exp, log, tanh, the logistic,
// rounding). The others (sin, cos, log1p, expm1, the error and gamma functions, tan, cbrt, pow,
// rem: up to hundreds of instructions each, in double most) run in one function per kernel,
// which the kernels of programs that hold one call at each such step. Expanded at every step of
// every kernel as well, they made ptxas spend five to eight minutes on each dtype's kernels, and
// their registers would be every kernel's: a program of expanded steps only takes kernels
// without them (the fused a * b + c among them).
constexpr bool expanded(Unary op) { return op < Unary::kSin; }
constexpr bool expanded(Binary op) {
  return op < Binary::kPow || (op > Binary::kPow && op < Binary::kRem);
}

// Whether every per-element step of `program` is expanded (its prologue runs through
// scalar_chain.h's general path).
inline bool every_step_expanded(const ScalarChain& program) {
  for (int32_t k = 0; k < program.steps; ++k) {
    const ChainStep& s = program.step[k];
    const bool in_place = s.kind == ChainStep::Kind::kUnary ? expanded(static_cast<Unary>(s.fn))
                                                            : expanded(static_cast<Binary>(s.fn));
    if (!in_place) return false;
  }
  return true;
}

// Queues `program` (uniform in dtype D, at most 8 per-element steps) as launch_chain() does
// (chain_launch.h), four elements a thread: a block a tile where it has no prologue, else a wave
// of blocks striding, each thread computing the prologue once.
template <DType D>
void launch_uniform(const ScalarChain& program, int* error, int64_t wanted, int multiprocessors,
                    int threads, cudaStream_t stream);

}  // namespace spmd::kernels::cuda
