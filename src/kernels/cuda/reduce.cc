#include "kernels/cuda/reduce.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>

#include "kernels/cuda/reduce_launch.h"
#include "kernels/cuda/status.h"
#include "kernels/scalar_reduce.h"
#include "spmd/dtype.h"
#include "spmd/error.h"

namespace spmd::kernels::cuda {
namespace {

ReducePlan plan_of(Reduce op, DType dtype, const Shape& shape, int axis, DType out_dtype) {
  if (!scalar::computes_in(dtype) || !scalar::computes_in(out_dtype)) {
    throw InvalidArgument("reductions of uint64 are not yet computed on GPUs");
  }
  ReducePlan p{op, dtype, out_dtype};
  for (int d = 0; d < axis; ++d) p.outer *= shape[static_cast<size_t>(d)];
  p.extent = shape[static_cast<size_t>(axis)];
  for (size_t d = static_cast<size_t>(axis) + 1; d < shape.size(); ++d) p.inner *= shape[d];
  return p;
}

// The chunk length along the axis at which a reduction splits into two passes, or the extent
// when one pass has blocks enough: outputs (or 32-column tiles) fewer than four blocks a
// multiprocessor leave most of the GPU idle while a few threads walk a long axis (a bias
// gradient's sum over a batch of 512 had 4 blocks). Chunks keep a thread at least 8 elements.
int64_t chunk_length(const ReducePlan& p, int multiprocessors) {
  const int64_t blocks = p.inner == 1 ? p.outer : p.outer * ((p.inner + 31) / 32);
  const int64_t per_block = p.inner == 1 ? 256 * 8 : 8 * 8;  // threads down the axis, 8 each
  const int64_t wanted = int64_t{multiprocessors} * 4;
  if (blocks >= wanted || p.extent < 2 * per_block) return std::max<int64_t>(p.extent, 1);
  const int64_t chunks = (wanted + blocks - 1) / blocks;
  return std::max((p.extent + chunks - 1) / chunks, per_block);
}

}  // namespace

void reduce(GpuContext& gpu, Reduce op, DType dtype, const std::byte* in, const Shape& shape,
            int axis, DType out_dtype, std::byte* out) {
  const ReducePlan p = plan_of(op, dtype, shape, axis, out_dtype);
  if (p.extent == 0 && (op == Reduce::kMax || op == Reduce::kMin)) {
    throw InvalidArgument(
        fmt::format("{} over an empty axis: a reduction with no identity", name(op)));
  }
  if (p.outer * p.inner == 0) return;
  check_cuda(cudaSetDevice(gpu.ordinal()), "cudaSetDevice", gpu.ordinal());
  const int max_blocks = gpu.multiprocessors() * 8;
  const int64_t chunk = chunk_length(p, gpu.multiprocessors());
  // A launch's status; its message is made only when it failed (a call's host time is the step's).
  const auto launched = [&](cudaError_t status) {
    if (status != cudaSuccess) {
      check_cuda(status, fmt::format("launch of the {} kernel", name(op)), gpu.ordinal());
    }
  };
  if (chunk >= p.extent) {
    launched(launch_reduce(p, chunk, in, out, max_blocks, gpu.stream()));
    return;
  }
  // Two passes: each chunk's result, in the output's dtype, then those results reduced in order.
  const int64_t chunks = (p.extent + chunk - 1) / chunk;
  const DeviceBuffer partial(
      gpu, static_cast<size_t>(p.outer * chunks * p.inner) * dtype_size(p.out_dtype));
  launched(launch_reduce(p, chunk, in, partial.data(), max_blocks, gpu.stream()));
  const ReducePlan rest{op, p.out_dtype, p.out_dtype, p.outer, chunks, p.inner};
  launched(launch_reduce(rest, chunks, partial.data(), out, max_blocks, gpu.stream()));
}

void argmax(GpuContext& gpu, DType dtype, const std::byte* in, const Shape& shape, int axis,
            std::byte* out) {
  const ReducePlan p = plan_of(Reduce::kMax, dtype, shape, axis, dtype);
  if (p.extent == 0) throw InvalidArgument("argmax over an empty axis");
  if (p.outer * p.inner == 0) return;
  check_cuda(cudaSetDevice(gpu.ordinal()), "cudaSetDevice", gpu.ordinal());
  check_cuda(launch_argmax(p, in, out, gpu.multiprocessors() * 8, gpu.stream()),
             "launch of the argmax kernel", gpu.ordinal());
}

}  // namespace spmd::kernels::cuda
