// The uniform chain kernels of DType::kFloat16 (chain_uniform.h).
#include "kernels/cuda/chain_uniform.cuh"

namespace spmd::kernels::cuda {

template void launch_uniform<DType::kFloat16>(const ScalarChain& program, int* error,
                                              int64_t wanted, int multiprocessors, int threads,
                                              cudaStream_t stream);

}  // namespace spmd::kernels::cuda
