#include "kernels/cuda/ordering.h"

#include <fmt/format.h>

#include <algorithm>

#include "kernels/cuda/ordering_launch.h"
#include "kernels/cuda/status.h"
#include "kernels/ordering.h"
#include "spmd/error.h"

namespace spmd::kernels::cuda {
namespace {

void check_orderable(DType dtype, const char* what) {
  if (!orderable(dtype)) {
    throw InvalidArgument(fmt::format("{} of {}: it takes 32- and 64-bit integers and floats", what,
                                      dtype_name(dtype)));
  }
}

void scan(GpuContext& gpu, bool multiply, DType dtype, const std::byte* in, const Shape& shape,
          int axis, std::byte* out) {
  check_orderable(dtype, multiply ? "cumprod" : "cumsum");
  const auto d = static_cast<size_t>(axis);
  int64_t outer = 1, inner = 1;
  for (size_t k = 0; k < d; ++k) outer *= shape[k];
  for (size_t k = d + 1; k < shape.size(); ++k) inner *= shape[k];
  if (outer * inner * shape[d] == 0) return;
  check_cuda(cudaSetDevice(gpu.ordinal()), "cudaSetDevice", gpu.ordinal());
  check_cuda(launch_scan(multiply, dtype, in, outer, shape[d], inner, out,
                         gpu.grid_blocks(outer * inner), gpu.stream()),
             multiply ? "launch of the cumprod kernel" : "launch of the cumsum kernel",
             gpu.ordinal());
}

}  // namespace

void cumsum(GpuContext& gpu, DType dtype, const std::byte* in, const Shape& shape, int axis,
            std::byte* out) {
  scan(gpu, false, dtype, in, shape, axis, out);
}

void cumprod(GpuContext& gpu, DType dtype, const std::byte* in, const Shape& shape, int axis,
             std::byte* out) {
  scan(gpu, true, dtype, in, shape, axis, out);
}

void search_sorted(GpuContext& gpu, DType dtype, const std::byte* sorted, int64_t n,
                   const std::byte* queries, int64_t count, int32_t* out) {
  check_orderable(dtype, "search_sorted");
  if (n <= 0) throw InvalidArgument("search_sorted on a GPU: an empty sorted array");
  if (count == 0) return;
  check_cuda(cudaSetDevice(gpu.ordinal()), "cudaSetDevice", gpu.ordinal());
  check_cuda(launch_search_sorted(dtype, sorted, n, queries, count, out, gpu.grid_blocks(count),
                                  gpu.stream()),
             "launch of the search_sorted kernel", gpu.ordinal());
}

void top_k(GpuContext& gpu, DType dtype, const std::byte* in, int64_t n, int64_t k, int32_t* out) {
  check_orderable(dtype, "top_k");
  if (k < 0 || k > n || n > INT32_MAX) {
    throw InvalidArgument(fmt::format("top_k on a GPU: k = {} of n = {} (0 ≤ k ≤ n < 2^31)", k, n));
  }
  if (k == 0) return;
  check_cuda(cudaSetDevice(gpu.ordinal()), "cudaSetDevice", gpu.ordinal());
  run_top_k(gpu, dtype, in, n, k, out);
}

void scatter_add(GpuContext& gpu, DType dtype, const std::byte* updates, const Shape& shape,
                 int axis, const int32_t* indices, int64_t count, std::byte* out) {
  if (!is_floating(dtype)) {
    throw InvalidArgument(
        fmt::format("scatter_add on a GPU of {}: it adds floats", dtype_name(dtype)));
  }
  const auto d = static_cast<size_t>(axis);
  if (shape[d] == 0) throw InvalidArgument("scatter_add on a GPU: into an empty axis");
  if (count >= INT32_MAX) {
    throw InvalidArgument(fmt::format("scatter_add on a GPU: {} indices (fewer than 2^31)", count));
  }
  if (shape_size(shape) == 0) return;
  check_cuda(cudaSetDevice(gpu.ordinal()), "cudaSetDevice", gpu.ordinal());
  run_scatter_add(gpu, dtype, updates, shape, axis, indices, count, out);
}

void sort(GpuContext& gpu, DType key_dtype, const std::byte* keys, const SortSpec& spec,
          const std::byte* payload, std::byte* out) {
  check_orderable(key_dtype, "sort");
  const int64_t total = shape_size(spec.shape);
  if (total >= INT32_MAX) {
    throw InvalidArgument(
        fmt::format("sort on a GPU: {} elements; it sorts fewer than 2^31 at once", total));
  }
  if (total == 0) return;
  if (spec.payload_size != 0 && spec.payload_size != 1 && spec.payload_size != 2 &&
      spec.payload_size != 4 && spec.payload_size != 8) {
    throw InvalidArgument(fmt::format(
        "sort on a GPU: payload elements of {} bytes (it moves 1, 2, 4 or 8)", spec.payload_size));
  }
  check_cuda(cudaSetDevice(gpu.ordinal()), "cudaSetDevice", gpu.ordinal());
  run_sort(gpu, key_dtype, keys, spec, payload, out);
}

}  // namespace spmd::kernels::cuda
