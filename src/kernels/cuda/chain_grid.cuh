// How the chain kernels are launched over a GPU: a wave of grid-striding blocks, or a block a
// tile. Private to src/kernels/cuda; included by the .cu files that launch chain kernels.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <limits>

namespace spmd::kernels::cuda {

// The blocks of `threads` threads that Kernel keeps resident on one multiprocessor (its
// registers decide: 40 a thread allow 6 blocks of 256, not 8), asked once per kernel; 8 when
// CUDA cannot say.
template <auto Kernel>
int resident_blocks(int threads) {
  static const int per_multiprocessor = [threads] {
    int n = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, Kernel, threads, 0) != cudaSuccess) {
      cudaGetLastError();  // not sticky: the launch's own check must not see it
      return 8;
    }
    return n > 0 ? n : 8;
  }();
  return per_multiprocessor;
}

// Kernel over at most `wanted` blocks, and no more than the GPU holds at once: a grid-stride
// kernel's blocks past one wave would run after the rest, at low occupancy (ncu on the H100:
// 1.33 waves of uniform_chain_kernel, 1056 blocks where 792 fit).
template <auto Kernel, class... Args>
void launch_grid(int64_t wanted, int multiprocessors, int threads, cudaStream_t stream,
                 Args... args) {
  const int64_t wave = int64_t{multiprocessors} * resident_blocks<Kernel>(threads);
  const int blocks = static_cast<int>(std::max<int64_t>(1, std::min(wanted, wave)));
  Kernel<<<blocks, threads, 0, stream>>>(args...);
}

// Kernel over `wanted` blocks, one tile each: the fastest grid for a memory-bound kernel whose
// threads do nothing once. On an H200, a plain a * b + c kernel ran at 0.92× of a device copy's
// bandwidth over one wave of blocks striding and 1.07× over a block a tile; chain_uniform.cuh's
// kernel went from 0.70× to 0.75×.
template <auto Kernel, class... Args>
void launch_all(int64_t wanted, int threads, cudaStream_t stream, Args... args) {
  const int64_t most = std::numeric_limits<int>::max();
  Kernel<<<static_cast<int>(std::clamp<int64_t>(wanted, 1, most)), threads, 0, stream>>>(args...);
}

}  // namespace spmd::kernels::cuda
