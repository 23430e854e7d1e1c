// Matrix products on a GPU through cuBLAS (kernels/matmul.h's contract): out[b] = a[b] · b[b]
// for each of `batch` row-major (m × k) · (k × n) pairs, as one strided-batched GEMM, or one per
// member of the outer batch dimensions where the operands lie strided (matmul.h). Each GEMM goes
// through cuBLASLt with the algorithm chosen once per shape (lt_gemm.h), or through
// cublasGemmStridedBatchedEx where cuBLASLt has none.
//
// float32 multiplies in full float32 (CUBLAS_COMPUTE_32F: no TF32, so values match the CPU's
// within rounding order), float64 in float64, float16 and bfloat16 accumulate in float32 and
// round once, as the CPU backend's do. The product is queued on the GPU's stream and the call
// returns. Throws InvalidArgument for another dtype (integers and bool are not yet multiplied
// on GPUs) or a dimension past cuBLAS's int range; cuBLAS failures as status.h says.
// Open to tools/: spmd-bench gpu times these kernels beside cuBLAS and a device copy.
#pragma once

#include <cstddef>

#include "kernels/cuda/gpu_context.h"
#include "kernels/matmul.h"
#include "spmd/dtype.h"

namespace spmd::kernels::cuda {

void matmul(GpuContext& gpu, DType dtype, MatmulShape s, const std::byte* a, const std::byte* b,
            std::byte* out);

}  // namespace spmd::kernels::cuda
