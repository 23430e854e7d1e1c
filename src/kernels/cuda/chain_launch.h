// One launch of the element-wise chain kernel (chain_kernel.cu), for chain.cc. Private to
// src/kernels/cuda.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/scalar_chain.h"

namespace spmd::kernels::cuda {

// How many elements each thread of a launch for `program` takes per tile.
int chain_elements_per_thread(const ScalarChain& program);

// Queues the kernel over program.n elements in blocks of `threads` on `stream`: `wanted` blocks
// (one tile each) for a uniform float program without a prologue; otherwise as many as a GPU of
// `multiprocessors` holds at once, each block then striding over several tiles (so that each
// thread runs the prologue once for many elements). A thread that divides an integer by zero
// sets *error to 1. Returns cudaGetLastError().
cudaError_t launch_chain(const ScalarChain& program, int* error, int64_t wanted,
                         int multiprocessors, int threads, cudaStream_t stream);

}  // namespace spmd::kernels::cuda
