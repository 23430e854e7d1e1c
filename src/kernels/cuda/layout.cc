#include "kernels/cuda/layout.h"

#include <fmt/format.h>

#include <algorithm>

#include "kernels/cuda/layout_launch.h"
#include "kernels/cuda/status.h"
#include "kernels/strided_copy.h"
#include "spmd/error.h"

namespace spmd::kernels::cuda {
namespace {

void check_element_size(size_t element_size, const char* what) {
  if (element_size != 1 && element_size != 2 && element_size != 4 && element_size != 8) {
    throw InvalidArgument(
        fmt::format("{} on a GPU: elements of {} bytes (1, 2, 4 or 8)", what, element_size));
  }
}

void run(GpuContext& gpu, const StridedCopy& plan, size_t element_size, const std::byte* from,
         std::byte* to, const char* what) {
  check_element_size(element_size, what);
  if (plan.count == 0) return;
  const int blocks = gpu.grid_blocks(plan.count);
  check_cuda(cudaSetDevice(gpu.ordinal()), "cudaSetDevice", gpu.ordinal());
  const cudaError_t status =
      launch_strided_copy(plan, element_size, from, to, blocks, gpu.stream());
  // The message is made only for a failure: a call's host time is the step's.
  if (status != cudaSuccess) {
    check_cuda(status, fmt::format("launch of the {} kernel", what), gpu.ordinal());
  }
}

}  // namespace

void broadcast(GpuContext& gpu, size_t element_size, const std::byte* in, const Shape& from,
               std::byte* out, const Shape& to) {
  run(gpu, broadcast_plan(from, to), element_size, in, out, "broadcast");
}

void transpose(GpuContext& gpu, size_t element_size, const std::byte* in, const Shape& shape,
               std::span<const int> perm, std::byte* out) {
  run(gpu, transpose_plan(shape, perm), element_size, in, out, "transpose");
}

void slice(GpuContext& gpu, size_t element_size, const std::byte* in, const Shape& shape,
           std::span<const int64_t> start, const Shape& extent, std::byte* out) {
  run(gpu, slice_plan(shape, start, extent), element_size, in, out, "slice");
}

void strided_slice(GpuContext& gpu, size_t element_size, const std::byte* in, const Shape& shape,
                   std::span<const int64_t> start, std::span<const int64_t> step,
                   const Shape& extent, std::byte* out) {
  run(gpu, strided_slice_plan(shape, start, step, extent), element_size, in, out, "strided slice");
}

void concatenate(GpuContext& gpu, size_t element_size, std::span<const std::byte* const> in,
                 std::span<const Shape> shapes, int axis, std::byte* out) {
  const std::vector<StridedCopy> plans = concatenate_plans(shapes, axis);
  for (size_t k = 0; k < plans.size(); ++k) {
    run(gpu, plans[k], element_size, in[k], out, "concatenate");
  }
}

void take(GpuContext& gpu, size_t element_size, const std::byte* in, const Shape& shape, int axis,
          const int32_t* indices, int64_t count, std::byte* out, const std::byte* fill) {
  check_element_size(element_size, "take");
  const auto d = static_cast<size_t>(axis);
  int64_t outer = 1, inner = 1;
  for (size_t k = 0; k < d; ++k) outer *= shape[k];
  for (size_t k = d + 1; k < shape.size(); ++k) inner *= shape[k];
  const int64_t total = outer * count * inner;
  if (total == 0) return;
  if (shape[d] == 0) throw InvalidArgument("take on a GPU: from an empty axis");
  check_cuda(cudaSetDevice(gpu.ordinal()), "cudaSetDevice", gpu.ordinal());
  check_cuda(launch_take(element_size, in, outer, shape[d], inner, indices, count, out, fill,
                         gpu.grid_blocks(total), gpu.stream()),
             "launch of the take kernel", gpu.ordinal());
}

}  // namespace spmd::kernels::cuda
