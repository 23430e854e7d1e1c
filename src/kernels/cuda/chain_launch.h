// One launch of the element-wise chain kernel (chain_kernel.cu), for chain.cc. Private to
// src/kernels/cuda.
#pragma once

#include <cuda_runtime_api.h>

#include "kernels/scalar_chain.h"

namespace spmd::kernels::cuda {

// How many elements each thread of a launch for `program` takes per tile.
int chain_elements_per_thread(const ScalarChain& program);

// Queues the kernel over program.n elements with `blocks` blocks of `threads` on `stream`; a
// thread that divides an integer by zero sets *error to 1. Returns cudaGetLastError().
cudaError_t launch_chain(const ScalarChain& program, int* error, int blocks, int threads,
                         cudaStream_t stream);

}  // namespace spmd::kernels::cuda
