// Constant and counting arrays on a GPU (kernels/backend.h's fill and iota): every element is
// scalar_ops.h's conversion of a float64 (`value`, or its own index) to the dtype, as the CPU
// backend converts it (saturating into integers, rounding into the half types). One launch; the
// call returns. Throws InvalidArgument for uint64.
// Open to tools/: spmd-bench gpu times a fill launch as the host cost of a plain kernel.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/cuda/gpu_context.h"
#include "spmd/dtype.h"

namespace spmd::kernels::cuda {

void fill(GpuContext& gpu, DType dtype, double value, std::byte* out, int64_t n);
void iota(GpuContext& gpu, DType dtype, std::byte* out, int64_t n);

}  // namespace spmd::kernels::cuda
