// Reductions along one axis on a GPU (kernels/reduce.h's contract): sum, max and min, and
// argmax. The accumulation is kernels/scalar_reduce.h's, which the CPU tests check. Where the
// reduced elements are contiguous (nothing after the axis), a block of 256 threads reduces each
// output, its threads' partial results combined by CUB's BlockReduce; otherwise a block takes 32
// neighbouring outputs, 8 threads down each column (a warp reads neighbouring elements) and
// their results combined in order. Where that makes fewer than 4 blocks a multiprocessor, the
// axis is cut into chunks (each at least 8 elements a thread) reduced by one launch into a
// temporary buffer of the output's dtype, and a second launch reduces the chunks' results in
// order. The order is fixed by the shape and the GPU's multiprocessor count, so a result is the
// same at every run. Floating-point sums add in another order than the CPU's pairwise blocks:
// they agree within rounding, not bit for bit. Max and min treat -0 as below +0. Queued on the
// GPU's stream; the call returns. Throws InvalidArgument, as the CPU kernels do, for max, min or
// argmax over an empty axis, and for uint64 (not yet computed on GPUs).
#pragma once

#include <cstddef>

#include "kernels/cuda/gpu_context.h"
#include "kernels/reduce.h"
#include "spmd/dtype.h"
#include "spmd/shape.h"

namespace spmd::kernels::cuda {

void reduce(GpuContext& gpu, Reduce op, DType dtype, const std::byte* in, const Shape& shape,
            int axis, DType out_dtype, std::byte* out);
// out: int32, shape without `axis`.
void argmax(GpuContext& gpu, DType dtype, const std::byte* in, const Shape& shape, int axis,
            std::byte* out);

}  // namespace spmd::kernels::cuda
