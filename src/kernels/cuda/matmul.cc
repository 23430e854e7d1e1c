#include "kernels/cuda/matmul.h"

#include <fmt/format.h>

#include <climits>
#include <mutex>

#include "kernels/cuda/lt_gemm.h"
#include "kernels/cuda/status.h"
#include "spmd/error.h"

namespace spmd::kernels::cuda {
namespace {

struct GemmTypes {
  cudaDataType_t data;
  cublasComputeType_t compute;
};

GemmTypes gemm_types(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return {CUDA_R_32F, CUBLAS_COMPUTE_32F};
    case DType::kFloat64:
      return {CUDA_R_64F, CUBLAS_COMPUTE_64F};
    case DType::kFloat16:
      return {CUDA_R_16F, CUBLAS_COMPUTE_32F};
    case DType::kBFloat16:
      return {CUDA_R_16BF, CUBLAS_COMPUTE_32F};
    default:
      throw InvalidArgument(fmt::format(
          "matmul of {} on a GPU: GPUs multiply float16, bfloat16, float32 and float64 so far",
          dtype_name(dtype)));
  }
}

int as_int(int64_t v, const char* what) {
  if (v < 0 || v > INT_MAX) {
    throw InvalidArgument(
        fmt::format("matmul on a GPU: {} = {} is past cuBLAS's int range", what, v));
  }
  return static_cast<int>(v);
}

// Sets a cuBLAS handle's stream to the calling thread's (GpuContext::stream()) while it lives,
// when that is not the GPU's own.
class HandleStream {
 public:
  HandleStream(cublasHandle_t handle, GpuContext& gpu)
      : handle_(handle), gpu_(gpu), other_(gpu.stream() != gpu.main_stream()) {
    if (other_)
      check_cublas(cublasSetStream(handle, gpu.stream()), "cublasSetStream", gpu.ordinal());
  }
  ~HandleStream() {
    if (other_) cublasSetStream(handle_, gpu_.main_stream());
  }
  HandleStream(const HandleStream&) = delete;
  HandleStream& operator=(const HandleStream&) = delete;

 private:
  cublasHandle_t handle_;
  GpuContext& gpu_;
  bool other_;
};

}  // namespace

void matmul(GpuContext& gpu, DType dtype, MatmulShape s, const std::byte* a, const std::byte* b,
            std::byte* out) {
  const GemmTypes types = gemm_types(dtype);
  const int m = as_int(s.m, "m"), n = as_int(s.n, "n"), k = as_int(s.k, "k");
  as_int(s.batch, "batch");
  if (s.batch == 0 || m == 0 || n == 0) return;
  const size_t width = dtype_size(dtype);
  if (k == 0) {  // a sum of nothing: zeros, without asking cuBLAS about an empty contraction
    // Each member's m rows, ldc apart; a packed batch's rows are one run of batch × m.
    const bool packed = is_packed(s);
    const size_t rows = packed ? size_t(s.batch) * size_t(m) : size_t(m);
    for (int64_t i = 0; i < (packed ? 1 : s.batch); ++i) {
      check_cuda(cudaMemset2DAsync(out + member_offsets(s, i).out * width, leading_c(s) * width, 0,
                                   size_t(n) * width, rows, gpu.stream()),
                 "cudaMemset2DAsync (matmul over k = 0)", gpu.ordinal());
    }
    return;
  }
  // Row-major out (m × n) is column-major outᵀ (n × m) = op(b)ᵀ · op(a)ᵀ: cuBLAS gets b first,
  // each row-major leading dimension as the column-major one.
  const cublasOperation_t op_b = s.transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_a = s.transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  const int lda = as_int(leading_a(s), "lda"), ldb = as_int(leading_b(s), "ldb");
  const int ldc = as_int(leading_c(s), "ldc");
  // One strided-batched call per member of the batch's outer dimensions, over the innermost
  // (one call in all for a batch of consecutive members, whose step is member 1's offsets).
  const MatmulOffsets step = member_offsets(s, 1);
  const MatmulBatchDim inner = s.batch_dims.empty()
                                   ? MatmulBatchDim{s.batch, step.a, step.b, step.out}
                                   : s.batch_dims.back();
  const int count = as_int(inner.size, "batch");
  const double one_d = 1.0, zero_d = 0.0;
  const float one_f = 1.0f, zero_f = 0.0f;
  const bool f64 = dtype == DType::kFloat64;
  const void* alpha = f64 ? static_cast<const void*>(&one_d) : &one_f;
  const void* beta = f64 ? static_cast<const void*>(&zero_d) : &zero_f;
  cublasHandle_t handle = gpu.blas();
  std::lock_guard lock(gpu.blas_mutex());
  check_cuda(cudaSetDevice(gpu.ordinal()), "cudaSetDevice", gpu.ordinal());
  // The handle queues on the GPU's one stream; a captured call's products go to the capture's
  // (call_graph.h), and the handle goes back to its own after them.
  const HandleStream on_stream(handle, gpu);
  for (int64_t first = 0; first < s.batch; first += inner.size) {
    const MatmulOffsets o = member_offsets(s, first);
    const LtGemm g{op_b, op_a,    n,       m,         k,     ldb,        lda,
                   ldc,  inner.b, inner.a, inner.out, count, types.data, types.compute};
    if (lt_gemm(gpu, g, alpha, b + o.b * width, a + o.a * width, beta, out + o.out * width)) {
      continue;
    }
    const cublasStatus_t status = cublasGemmStridedBatchedEx(
        handle, op_b, op_a, n, m, k, alpha, b + o.b * width, types.data, ldb, inner.b,
        a + o.a * width, types.data, lda, inner.a, beta, out + o.out * width, types.data, ldc,
        inner.out, count, types.compute, CUBLAS_GEMM_DEFAULT);
    if (status != CUBLAS_STATUS_SUCCESS) {  // the message is made only for a failure
      check_cublas(status,
                   fmt::format("cublasGemmStridedBatchedEx ({} × {} × {}, batch {}, {})", m, k, n,
                               count, dtype_name(dtype)),
                   gpu.ordinal());
    }
  }
}

}  // namespace spmd::kernels::cuda
