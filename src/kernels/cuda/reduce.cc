#include "kernels/cuda/reduce.h"

#include <fmt/format.h>

#include "kernels/cuda/reduce_launch.h"
#include "kernels/cuda/status.h"
#include "kernels/scalar_reduce.h"
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
  check_cuda(launch_reduce(p, in, out, gpu.multiprocessors() * 8, gpu.stream()),
             fmt::format("launch of the {} kernel", name(op)), gpu.ordinal());
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
