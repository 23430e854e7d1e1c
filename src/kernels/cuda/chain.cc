#include "kernels/cuda/chain.h"

#include <algorithm>

#include "kernels/cuda/chain_launch.h"
#include "kernels/cuda/status.h"
#include "kernels/scalar_chain.h"

namespace spmd::kernels::cuda {

void run_chain(GpuContext& gpu, std::span<const ChainStep> steps, std::span<const Input> inputs,
               std::byte* out, int64_t n) {
  const ScalarChain program = make_scalar_chain(steps, inputs, out, n);
  if (n == 0) return;
  constexpr int kThreads = 256;  // chain_kernel.cu's launch bounds
  const int64_t tile = int64_t{kThreads} * chain_elements_per_thread(program);
  const int64_t wanted = (n + tile - 1) / tile;
  check_cuda(cudaSetDevice(gpu.ordinal()), "cudaSetDevice", gpu.ordinal());
  check_cuda(launch_chain(program, gpu.error_word(), wanted, gpu.multiprocessors(), kThreads,
                          gpu.stream()),
             "launch of the element-wise chain kernel", gpu.ordinal());
}

}  // namespace spmd::kernels::cuda
