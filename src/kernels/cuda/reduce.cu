// The reduction kernels: a block per output over a contiguous axis (CUB's BlockReduce), else a
// thread per output.
#include <algorithm>
#include <cub/block/block_reduce.cuh>

#include "kernels/cuda/reduce_launch.h"

namespace spmd::kernels::cuda {
namespace {

constexpr int kThreads = 256;

// A thread's partial result, `some` false when it had no element.
struct Partial {
  scalar::Slot value;
  bool some;
};

struct Combine {
  ReducePlan plan;
  __device__ Partial operator()(const Partial& a, const Partial& b) const {
    if (!a.some) return b;
    if (!b.some) return a;
    return {reduce_combine(plan, a.value, b.value), true};
  }
};

// inner == 1: block b reduces outputs b, b + gridDim.x, …; thread t takes elements t, t + 256, ….
__global__ void __launch_bounds__(kThreads)
    reduce_contiguous(const __grid_constant__ ReducePlan p, const std::byte* in, std::byte* out) {
  using BlockReduce = cub::BlockReduce<Partial, kThreads>;
  __shared__ typename BlockReduce::TempStorage storage;
  for (int64_t o = blockIdx.x; o < p.outer; o += gridDim.x) {
    Partial mine{{}, threadIdx.x < p.extent};
    if (mine.some) mine.value = reduce_range(p, in, o, 0, threadIdx.x, p.extent, kThreads);
    const Partial total = BlockReduce(storage).Reduce(mine, Combine{p});
    if (threadIdx.x == 0) {
      // An empty sum or product is its identity (only they reach here with extent 0).
      scalar::store(p.out_dtype, out, o, total.some ? total.value : reduce_identity(p));
    }
    __syncthreads();  // storage is reused by the next output
  }
}

// inner > 1: thread (o, i) reduces its column in order.
__global__ void __launch_bounds__(kThreads)
    reduce_strided(const __grid_constant__ ReducePlan p, const std::byte* in, std::byte* out) {
  const int64_t outputs = p.outer * p.inner;
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  for (int64_t k = int64_t{blockIdx.x} * blockDim.x + threadIdx.x; k < outputs; k += stride) {
    const int64_t o = k / p.inner, i = k % p.inner;
    const scalar::Slot value =
        p.extent == 0 ? reduce_identity(p) : reduce_range(p, in, o, i, 0, p.extent, 1);
    scalar::store(p.out_dtype, out, k, value);
  }
}

__global__ void __launch_bounds__(kThreads)
    argmax_kernel(const __grid_constant__ ReducePlan p, const std::byte* in, std::byte* out) {
  const int64_t outputs = p.outer * p.inner;
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  auto* result = reinterpret_cast<int32_t*>(out);
  for (int64_t k = int64_t{blockIdx.x} * blockDim.x + threadIdx.x; k < outputs; k += stride) {
    result[k] = argmax_element(p.dtype, in, p.extent, p.inner, k / p.inner, k % p.inner);
  }
}

int blocks_for(int64_t threads_wanted, int max_blocks) {
  return static_cast<int>(std::max<int64_t>(
      1, std::min<int64_t>((threads_wanted + kThreads - 1) / kThreads, max_blocks)));
}

}  // namespace

cudaError_t launch_reduce(const ReducePlan& plan, const std::byte* in, std::byte* out,
                          int max_blocks, cudaStream_t stream) {
  if (plan.inner == 1) {
    const int blocks = static_cast<int>(std::min<int64_t>(plan.outer, int64_t{max_blocks} * 4));
    reduce_contiguous<<<blocks, kThreads, 0, stream>>>(plan, in, out);
  } else {
    reduce_strided<<<blocks_for(plan.outer * plan.inner, max_blocks), kThreads, 0, stream>>>(
        plan, in, out);
  }
  return cudaGetLastError();
}

cudaError_t launch_argmax(const ReducePlan& plan, const std::byte* in, std::byte* out,
                          int max_blocks, cudaStream_t stream) {
  argmax_kernel<<<blocks_for(plan.outer * plan.inner, max_blocks), kThreads, 0, stream>>>(plan, in,
                                                                                          out);
  return cudaGetLastError();
}

}  // namespace spmd::kernels::cuda
