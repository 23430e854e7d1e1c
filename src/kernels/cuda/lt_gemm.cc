#include "kernels/cuda/lt_gemm.h"

#include <cublasLt.h>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>
#include <memory>

#include "kernels/cuda/status.h"

namespace spmd::kernels::cuda {
namespace {

constexpr size_t kWorkspaceBytes = size_t{32} << 20;  // cuBLAS's own advice for Hopper
constexpr int kMaxGpus = 64;

// A product's descriptors and its algorithm; `usable` false where cuBLASLt offered none.
struct Plan {
  cublasLtMatmulDesc_t op = nullptr;
  std::array<cublasLtMatrixLayout_t, 3> layout{};  // A, B, C (also D)
  cublasLtMatmulAlgo_t algo{};
  bool usable = false;

  Plan() = default;
  Plan(const Plan&) = delete;
  Plan& operator=(const Plan&) = delete;
  ~Plan() {
    for (cublasLtMatrixLayout_t l : layout) {
      if (l) cublasLtMatrixLayoutDestroy(l);
    }
    if (op) cublasLtMatmulDescDestroy(op);
  }
};

// The shape, types and pointer alignments a plan is made for.
using Key = std::array<int64_t, 17>;

struct GpuPlans {
  cublasLtHandle_t handle = nullptr;
  void* workspace = nullptr;
  std::map<Key, std::unique_ptr<Plan>> plans;
};

void check(cublasStatus_t status, const char* call, int gpu) {
  if (status != CUBLAS_STATUS_SUCCESS) check_cublas(status, call, gpu);
}

// GPU `gpu`'s handle, workspace and plans, made on first use and kept until the process ends
// (never destroyed, as GpuContext's are not). Its slot is used under the GPU's blas_mutex().
GpuPlans& plans_of(GpuContext& gpu) {
  static auto& all = *new std::array<std::unique_ptr<GpuPlans>, kMaxGpus>;
  auto& slot = all.at(static_cast<size_t>(gpu.ordinal()));
  if (!slot) {
    auto made = std::make_unique<GpuPlans>();
    check_cuda(cudaSetDevice(gpu.ordinal()), "cudaSetDevice", gpu.ordinal());
    check(cublasLtCreate(&made->handle), "cublasLtCreate", gpu.ordinal());
    check_cuda(cudaMalloc(&made->workspace, kWorkspaceBytes), "cudaMalloc (cuBLASLt workspace)",
               gpu.ordinal());
    slot = std::move(made);
  }
  return *slot;
}

// The largest power of two, at most 256, dividing the address and a batch's stride in bytes.
uint32_t alignment(const void* p, int64_t stride_bytes) {
  const auto bits = reinterpret_cast<std::uintptr_t>(p) | static_cast<std::uintptr_t>(stride_bytes);
  uint32_t a = 256;
  while (a > 1 && bits % a != 0) a /= 2;
  return a;
}

cublasLtMatrixLayout_t layout(cudaDataType_t type, int rows, int cols, int ld, int batch,
                              int64_t stride, int gpu) {
  cublasLtMatrixLayout_t l = nullptr;
  check(cublasLtMatrixLayoutCreate(&l, type, rows, cols, ld), "cublasLtMatrixLayoutCreate", gpu);
  if (batch > 1) {
    check(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch,
                                           sizeof(batch)),
          "cublasLtMatrixLayoutSetAttribute(BATCH_COUNT)", gpu);
    check(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride,
                                           sizeof(stride)),
          "cublasLtMatrixLayoutSetAttribute(STRIDED_BATCH_OFFSET)", gpu);
  }
  return l;
}

// The plan for `g` at these alignments: descriptors, and cuBLASLt's first choice of algorithm.
std::unique_ptr<Plan> make_plan(GpuPlans& plans, const LtGemm& g,
                                const std::array<uint32_t, 3>& align, int gpu) {
  auto p = std::make_unique<Plan>();
  const cudaDataType_t scale = g.compute == CUBLAS_COMPUTE_64F ? CUDA_R_64F : CUDA_R_32F;
  check(cublasLtMatmulDescCreate(&p->op, g.compute, scale), "cublasLtMatmulDescCreate", gpu);
  check(cublasLtMatmulDescSetAttribute(p->op, CUBLASLT_MATMUL_DESC_TRANSA, &g.op_a, sizeof(g.op_a)),
        "cublasLtMatmulDescSetAttribute(TRANSA)", gpu);
  check(cublasLtMatmulDescSetAttribute(p->op, CUBLASLT_MATMUL_DESC_TRANSB, &g.op_b, sizeof(g.op_b)),
        "cublasLtMatmulDescSetAttribute(TRANSB)", gpu);
  const bool ta = g.op_a != CUBLAS_OP_N, tb = g.op_b != CUBLAS_OP_N;
  p->layout[0] = layout(g.data, ta ? g.k : g.m, ta ? g.m : g.k, g.lda, g.batch, g.stride_a, gpu);
  p->layout[1] = layout(g.data, tb ? g.n : g.k, tb ? g.k : g.n, g.ldb, g.batch, g.stride_b, gpu);
  p->layout[2] = layout(g.data, g.m, g.n, g.ldc, g.batch, g.stride_c, gpu);

  cublasLtMatmulPreference_t preference = nullptr;
  check(cublasLtMatmulPreferenceCreate(&preference), "cublasLtMatmulPreferenceCreate", gpu);
  const std::unique_ptr<cublasLtMatmulPreferenceOpaque_t, void (*)(cublasLtMatmulPreference_t)>
      owned(preference, [](cublasLtMatmulPreference_t q) { cublasLtMatmulPreferenceDestroy(q); });
  const uint64_t workspace = kWorkspaceBytes;
  check(cublasLtMatmulPreferenceSetAttribute(preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                             &workspace, sizeof(workspace)),
        "cublasLtMatmulPreferenceSetAttribute(MAX_WORKSPACE_BYTES)", gpu);
  const std::array<cublasLtMatmulPreferenceAttributes_t, 4> alignments = {
      CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
      CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES};
  for (size_t i = 0; i < alignments.size(); ++i) {
    const uint32_t bytes = align[std::min<size_t>(i, 2)];
    check(cublasLtMatmulPreferenceSetAttribute(preference, alignments[i], &bytes, sizeof(bytes)),
          "cublasLtMatmulPreferenceSetAttribute(MIN_ALIGNMENT)", gpu);
  }
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  const cublasStatus_t status =
      cublasLtMatmulAlgoGetHeuristic(plans.handle, p->op, p->layout[0], p->layout[1], p->layout[2],
                                     p->layout[2], preference, 1, &result, &found);
  if (status == CUBLAS_STATUS_SUCCESS && found > 0 && result.state == CUBLAS_STATUS_SUCCESS) {
    p->algo = result.algo;
    p->usable = true;
  } else if (status != CUBLAS_STATUS_NOT_SUPPORTED && status != CUBLAS_STATUS_SUCCESS) {
    check_cublas(status, "cublasLtMatmulAlgoGetHeuristic", gpu);
  }
  return p;
}

}  // namespace

bool lt_gemm(GpuContext& gpu, const LtGemm& g, const void* alpha, const void* a, const void* b,
             const void* beta, void* c) {
  GpuPlans& plans = plans_of(gpu);
  const int64_t width = g.data == CUDA_R_64F ? 8 : g.data == CUDA_R_32F ? 4 : 2;
  const int64_t strided = g.batch > 1 ? width : 0;  // a batch's later members are aligned too
  const std::array<uint32_t, 3> align = {alignment(a, g.stride_a * strided),
                                         alignment(b, g.stride_b * strided),
                                         alignment(c, g.stride_c * strided)};
  const Key key = {g.op_a, g.op_b,    g.m,        g.n,        g.k,        g.lda,
                   g.ldb,  g.ldc,     g.stride_a, g.stride_b, g.stride_c, g.batch,
                   g.data, g.compute, align[0],   align[1],   align[2]};
  auto& plan = plans.plans[key];
  if (!plan) plan = make_plan(plans, g, align, gpu.ordinal());
  if (!plan->usable) return false;
  const cublasStatus_t status =
      cublasLtMatmul(plans.handle, plan->op, alpha, a, plan->layout[0], b, plan->layout[1], beta, c,
                     plan->layout[2], c, plan->layout[2], &plan->algo, plans.workspace,
                     kWorkspaceBytes, gpu.stream());
  if (status == CUBLAS_STATUS_NOT_SUPPORTED) {  // never again for this shape: cuBLAS's own call
    plan->usable = false;
    return false;
  }
  if (status != CUBLAS_STATUS_SUCCESS) {
    check_cublas(status,
                 fmt::format("cublasLtMatmul ({} × {} × {}, batch {})", g.m, g.k, g.n, g.batch),
                 gpu.ordinal());
  }
  return true;
}

}  // namespace spmd::kernels::cuda
