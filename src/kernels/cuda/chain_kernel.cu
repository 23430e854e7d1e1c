// The element-wise chain kernels: each thread carries its elements through every step
// (scalar_chain.h's run_element, the code the CPU tests run); uniform floating-point programs
// take chain_uniform.h's faster kernels.
#include <cstdint>

#include "kernels/cuda/chain_grid.cuh"
#include "kernels/cuda/chain_launch.h"
#include "kernels/cuda/chain_uniform.h"

namespace spmd::kernels::cuda {
namespace {

// Programs of any length, one element at a time, their results in an array.
__global__ void __launch_bounds__(256)
    chain_kernel(const __grid_constant__ ScalarChain program, int* error) {
  bool divided_by_zero = false;
  HoistedValues hoisted{};
  run_prologue(program, hoisted, &divided_by_zero);
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  for (int64_t e = int64_t{blockIdx.x} * blockDim.x + threadIdx.x; e < program.n; e += stride) {
    run_element(program, e, hoisted, &divided_by_zero);
  }
  if (divided_by_zero) atomicExch(error, 1);
}

// Programs of at most N steps, one element at a time, their results in registers. At most 64
// registers a thread, so that four blocks of 256 fit a multiprocessor.
template <int N>
__global__ void __launch_bounds__(256, 4)
    short_chain_kernel(const __grid_constant__ ScalarChain program, int* error) {
  bool divided_by_zero = false;
  HoistedValues hoisted{};
  run_prologue(program, hoisted, &divided_by_zero);
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  for (int64_t e = int64_t{blockIdx.x} * blockDim.x + threadIdx.x; e < program.n; e += stride) {
    run_element_short<N>(program, e, hoisted, &divided_by_zero);
  }
  if (divided_by_zero) atomicExch(error, 1);
}

}  // namespace

int chain_elements_per_thread(const ScalarChain& program) {
  return program.steps <= 8 && is_uniform_float(program) ? 4 : 1;
}

cudaError_t launch_chain(const ScalarChain& program, int* error, int64_t wanted,
                         int multiprocessors, int threads, cudaStream_t stream) {
  const int m = multiprocessors;
  if (program.steps <= 8 && is_uniform_float(program)) {
    switch (program.step[0].dtype) {
      case DType::kFloat32:
        launch_uniform<DType::kFloat32>(program, error, wanted, m, threads, stream);
        break;
      case DType::kFloat64:
        launch_uniform<DType::kFloat64>(program, error, wanted, m, threads, stream);
        break;
      case DType::kBFloat16:
        launch_uniform<DType::kBFloat16>(program, error, wanted, m, threads, stream);
        break;
      default:
        launch_uniform<DType::kFloat16>(program, error, wanted, m, threads, stream);
        break;
    }
  } else if (program.steps <= 2) {
    launch_grid<&short_chain_kernel<2>>(wanted, m, threads, stream, program, error);
  } else if (program.steps <= 4) {
    launch_grid<&short_chain_kernel<4>>(wanted, m, threads, stream, program, error);
  } else if (program.steps <= 8) {
    launch_grid<&short_chain_kernel<8>>(wanted, m, threads, stream, program, error);
  } else {
    launch_grid<&chain_kernel>(wanted, m, threads, stream, program, error);
  }
  return cudaGetLastError();
}

}  // namespace spmd::kernels::cuda
