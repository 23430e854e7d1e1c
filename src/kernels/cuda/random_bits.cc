#include "kernels/cuda/random_bits.h"

#include <algorithm>

#include "kernels/cuda/random_bits_launch.h"
#include "kernels/cuda/status.h"
#include "kernels/strided_copy.h"

namespace spmd::kernels::cuda {

void random_bits(GpuContext& gpu, RandomBits kind, const RandomBlock& block, std::byte* out) {
  // The block as a box of the whole array: element j reads "from" its flat index.
  const StridedCopy indices = random_block_plan(block);
  if (indices.count == 0) return;
  const int blocks = gpu.grid_blocks(indices.count);
  check_cuda(cudaSetDevice(gpu.ordinal()), "cudaSetDevice", gpu.ordinal());
  check_cuda(launch_random_bits(kind, block.key, indices, out, blocks, gpu.stream()),
             "launch of the random bits kernel", gpu.ordinal());
}

}  // namespace spmd::kernels::cuda
