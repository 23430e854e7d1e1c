#include "kernels/cuda/fill.h"

#include <fmt/format.h>

#include <algorithm>

#include "kernels/cuda/fill_launch.h"
#include "kernels/cuda/status.h"
#include "spmd/error.h"

namespace spmd::kernels::cuda {
namespace {

void check_dtype(DType dtype, const char* what) {
  if (!scalar::computes_in(dtype)) {
    throw InvalidArgument(
        fmt::format("{} of {} is not yet computed on GPUs", what, dtype_name(dtype)));
  }
}

}  // namespace

void fill(GpuContext& gpu, DType dtype, double value, std::byte* out, int64_t n) {
  check_dtype(dtype, "fill");
  if (n == 0) return;
  const scalar::Slot converted =
      scalar::convert(DType::kFloat64, dtype, scalar::make_double(value));
  check_cuda(cudaSetDevice(gpu.ordinal()), "cudaSetDevice", gpu.ordinal());
  check_cuda(launch_fill(dtype, converted, out, n, gpu.grid_blocks(n), gpu.stream()),
             "launch of the fill kernel", gpu.ordinal());
}

void iota(GpuContext& gpu, DType dtype, std::byte* out, int64_t n) {
  check_dtype(dtype, "iota");
  if (n == 0) return;
  check_cuda(cudaSetDevice(gpu.ordinal()), "cudaSetDevice", gpu.ordinal());
  check_cuda(launch_iota(dtype, out, n, gpu.grid_blocks(n), gpu.stream()),
             "launch of the iota kernel", gpu.ordinal());
}

}  // namespace spmd::kernels::cuda
