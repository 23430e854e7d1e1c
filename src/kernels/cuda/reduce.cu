// The reduction kernels: a block per output (or chunk of one) over a contiguous axis, CUB's
// BlockReduce combining its threads; else a block per 32 neighbouring columns, 8 threads down
// each.
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

// Reduction `p`'s axis cut into `count` chunks of `chunk` elements (the last one shorter): output
// (o, c, i) reduces elements c·chunk … (c + 1)·chunk of column (o, i), so `out` has shape
// (outer, count, inner). A chunk of `extent` or more is the whole reduction.
struct Chunks {
  int64_t chunk, count;
  __device__ int64_t begin(int64_t c) const { return c * chunk; }
  __device__ int64_t end(const ReducePlan& p, int64_t c) const {
    return min(p.extent, (c + 1) * chunk);
  }
};

// inner == 1: block b reduces output b (row b / count's chunk b % count); thread t takes its
// chunk's elements t, t + 256, …, and CUB's BlockReduce combines the threads' results.
__global__ void __launch_bounds__(kThreads)
    reduce_contiguous(const __grid_constant__ ReducePlan p, Chunks chunks, const std::byte* in,
                      std::byte* out) {
  using BlockReduce = cub::BlockReduce<Partial, kThreads>;
  __shared__ typename BlockReduce::TempStorage storage;
  for (int64_t b = blockIdx.x; b < p.outer * chunks.count; b += gridDim.x) {
    const int64_t o = b / chunks.count, c = b % chunks.count;
    const int64_t begin = chunks.begin(c) + threadIdx.x, end = chunks.end(p, c);
    Partial mine{{}, begin < end};
    if (mine.some) mine.value = reduce_range(p, in, o, 0, begin, end, kThreads);
    const Partial total = BlockReduce(storage).Reduce(mine, Combine{p});
    if (threadIdx.x == 0) {
      // An empty sum or product is its identity (only they reach here with extent 0).
      scalar::store(p.out_dtype, out, b, total.some ? total.value : reduce_identity(p));
    }
    __syncthreads();  // storage is reused by the next output
  }
}

// inner > 1: a block of kColumns × kRows threads takes kColumns neighbouring columns of one
// chunk (a warp reads one row's neighbouring elements); thread (x, y) reduces rows y, y + kRows,
// … of its column, and thread (x, 0) combines the kRows results in order.
constexpr int kColumns = 32, kRows = kThreads / kColumns;

__global__ void __launch_bounds__(kThreads)
    reduce_columns(const __grid_constant__ ReducePlan p, Chunks chunks, const std::byte* in,
                   std::byte* out) {
  __shared__ Partial rows[kRows][kColumns];
  const int64_t tiles = (p.inner + kColumns - 1) / kColumns;
  const int x = threadIdx.x, y = threadIdx.y;
  for (int64_t b = blockIdx.x; b < p.outer * chunks.count * tiles; b += gridDim.x) {
    const int64_t i = b % tiles * kColumns + x, c = b / tiles % chunks.count;
    const int64_t o = b / tiles / chunks.count;
    const int64_t begin = chunks.begin(c) + y, end = chunks.end(p, c);
    Partial mine{{}, i < p.inner && begin < end};
    if (mine.some) mine.value = reduce_range(p, in, o, i, begin, end, kRows);
    rows[y][x] = mine;
    __syncthreads();
    if (y == 0 && i < p.inner) {
      Partial total = rows[0][x];
      for (int r = 1; r < kRows; ++r) total = Combine{p}(total, rows[r][x]);
      scalar::store(p.out_dtype, out, (o * chunks.count + c) * p.inner + i,
                    total.some ? total.value : reduce_identity(p));
    }
    __syncthreads();  // rows is reused by the next tile
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

cudaError_t launch_reduce(const ReducePlan& plan, int64_t chunk, const std::byte* in,
                          std::byte* out, int max_blocks, cudaStream_t stream) {
  const Chunks chunks{chunk, std::max<int64_t>(1, (plan.extent + chunk - 1) / chunk)};
  const int64_t outputs = plan.outer * chunks.count;
  if (plan.inner == 1) {
    const int blocks = static_cast<int>(std::min<int64_t>(outputs, max_blocks));
    reduce_contiguous<<<blocks, kThreads, 0, stream>>>(plan, chunks, in, out);
  } else {
    const int64_t tiles = outputs * ((plan.inner + kColumns - 1) / kColumns);
    const int blocks = static_cast<int>(std::min<int64_t>(tiles, max_blocks));
    reduce_columns<<<blocks, dim3(kColumns, kRows), 0, stream>>>(plan, chunks, in, out);
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
