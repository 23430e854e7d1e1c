// One strided-batched GEMM through cuBLASLt, its algorithm chosen once per shape and kept (the
// plan), for matmul.cc. cublasGemmStridedBatchedEx asks cuBLAS's heuristics at every call, and a
// small training step's products are launched from the host, so each call's host cost is the
// step's. On an H200, 2,000 128³ float32 products queued took 7.6 µs each through a kept plan
// and 8.2 µs through cublasGemmEx (spmd-bench gpu; bench/RESULTS.md, session 61). The plan is
// also where cuBLASLt's epilogues (a bias, a ReLU) would attach. Private to src/kernels/cuda.
#pragma once

#include <cublas_v2.h>

#include <cstdint>

#include "kernels/cuda/gpu_context.h"

namespace spmd::kernels::cuda {

// cublasGemmStridedBatchedEx's arguments, in its (column-major) terms.
struct LtGemm {
  cublasOperation_t op_a = CUBLAS_OP_N, op_b = CUBLAS_OP_N;
  int m = 0, n = 0, k = 0;
  int lda = 0, ldb = 0, ldc = 0;
  int64_t stride_a = 0, stride_b = 0, stride_c = 0;
  int batch = 1;
  cudaDataType_t data = CUDA_R_32F;
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
};

// Queues C = alpha · op(A) · op(B) + beta · C as cublasGemmStridedBatchedEx would (alpha and beta
// double for CUBLAS_COMPUTE_64F, else float) on gpu's stream, through a plan made on the first
// call of its shape, dtype and pointer alignments (at most 256 bytes), and kept for the
// process's life. Returns false, having queued nothing, where cuBLASLt has no algorithm for it
// (the caller then calls cublasGemmStridedBatchedEx); throws what check_cublas() throws for
// any other failure. The caller holds gpu.blas_mutex(): the plans and the GPU's one workspace
// are used under it, and the workspace is reused by products ordered on the one stream.
bool lt_gemm(GpuContext& gpu, const LtGemm& g, const void* alpha, const void* a, const void* b,
             const void* beta, void* c);

}  // namespace spmd::kernels::cuda
