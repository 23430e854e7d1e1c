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

// Queues `program` (uniform in dtype D, at most 8 per-element steps) as launch_chain() does
// (chain_launch.h), four elements a thread: a block a tile where it has no prologue, else a wave
// of blocks striding, each thread computing the prologue once.
template <DType D>
void launch_uniform(const ScalarChain& program, int* error, int64_t wanted, int multiprocessors,
                    int threads, cudaStream_t stream);

}  // namespace spmd::kernels::cuda
