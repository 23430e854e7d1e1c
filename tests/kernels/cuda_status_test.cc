// kernels/cuda/status.h and GpuContext's refusals: every failed CUDA and cuBLAS call becomes an
// spmd error naming the call, the GPU and the process, of the class its status calls for. Runs
// on the CPU (the CUDA runtime's names and texts need no GPU); where no GPU is visible, asking
// for one is FailedPrecondition saying why, and where one is, asking past the last one is.
#include <cublas_api.h>
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <string>

#include "kernels/cuda/gpu_context.h"
#include "kernels/cuda/status.h"
#include "spmd/error.h"

namespace spmd::kernels::cuda {
namespace {

TEST(CudaStatus, EachStatusHasTheClassItCallsFor) {
  EXPECT_EQ(classify_cuda(cudaErrorMemoryAllocation), StatusKind::kOutOfMemory);
  EXPECT_EQ(classify_cuda(cudaErrorInvalidValue), StatusKind::kInvalidArgument);
  EXPECT_EQ(classify_cuda(cudaErrorNoDevice), StatusKind::kUnavailable);
  EXPECT_EQ(classify_cuda(cudaErrorInsufficientDriver), StatusKind::kUnavailable);
  EXPECT_EQ(classify_cuda(cudaErrorNoKernelImageForDevice), StatusKind::kUnavailable);
  EXPECT_EQ(classify_cuda(cudaErrorIllegalAddress), StatusKind::kDeviceFault);
  EXPECT_EQ(classify_cuda(cudaErrorLaunchFailure), StatusKind::kDeviceFault);
  EXPECT_EQ(classify_cuda(cudaErrorNotReady), StatusKind::kOther);
  EXPECT_EQ(classify_cublas(CUBLAS_STATUS_ALLOC_FAILED), StatusKind::kOutOfMemory);
  EXPECT_EQ(classify_cublas(CUBLAS_STATUS_INVALID_VALUE), StatusKind::kInvalidArgument);
  EXPECT_EQ(classify_cublas(CUBLAS_STATUS_ARCH_MISMATCH), StatusKind::kUnavailable);
  EXPECT_EQ(classify_cublas(CUBLAS_STATUS_EXECUTION_FAILED), StatusKind::kDeviceFault);
}

template <class E>
std::string thrown_by(int code, bool cublas) {
  try {
    if (cublas) {
      check_cublas(code, "cublasGemmEx (8 × 8 × 8)", 1);
    } else {
      check_cuda(code, "cudaMallocAsync of 4096 bytes", 1);
    }
  } catch (const E& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong class: " << e.what();
  }
  ADD_FAILURE() << "nothing thrown for status " << code;
  return "";
}

TEST(CudaStatus, AFailedCallNamesTheCallTheGpuTheProcessAndWhatToDo) {
  set_process_label("process 3 on host gpu-node-7");
  const std::string oom = thrown_by<ResourceExhausted>(cudaErrorMemoryAllocation, false);
  EXPECT_NE(oom.find("cudaMallocAsync of 4096 bytes failed on GPU 1 of process 3 on host "
                     "gpu-node-7"),
            std::string::npos)
      << oom;
  EXPECT_NE(oom.find("cudaErrorMemoryAllocation"), std::string::npos) << oom;
  EXPECT_NE(oom.find("free arrays"), std::string::npos) << oom;
  const std::string fault = thrown_by<Error>(cudaErrorIllegalAddress, false);
  EXPECT_NE(fault.find("restart the process"), std::string::npos) << fault;
  EXPECT_NE(fault.find("compute-sanitizer"), std::string::npos) << fault;
  const std::string driver = thrown_by<FailedPrecondition>(cudaErrorInsufficientDriver, false);
  EXPECT_NE(driver.find("SPMD_PLATFORMS=cpu"), std::string::npos) << driver;
  const std::string blas = thrown_by<ResourceExhausted>(CUBLAS_STATUS_ALLOC_FAILED, true);
  EXPECT_NE(blas.find("cublasGemmEx (8 × 8 × 8) failed on GPU 1"), std::string::npos) << blas;
  EXPECT_NE(blas.find("CUBLAS_STATUS_ALLOC_FAILED"), std::string::npos) << blas;
  thrown_by<InvalidArgument>(cudaErrorInvalidValue, false);
  EXPECT_NO_THROW(check_cuda(cudaSuccess, "cudaFree", 0));
  EXPECT_NO_THROW(check_cublas(CUBLAS_STATUS_SUCCESS, "cublasCreate", 0));
  set_process_label("");
  EXPECT_NE(process_label().find("pid "), std::string::npos) << process_label();
}

TEST(CudaStatus, AGpuThatIsNotThereIsRefusedSayingWhy) {
  std::string why;
  const int gpus = visible_gpus(&why);
  if (gpus == 0) {
    EXPECT_FALSE(why.empty());
  }
  try {
    GpuContext::get(gpus);
    FAIL() << "GPU " << gpus << " of " << gpus << " was given";
  } catch (const FailedPrecondition& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("GPU " + std::to_string(gpus) + " of "), std::string::npos) << message;
    EXPECT_NE(message.find("sees " + std::to_string(gpus) + " GPU(s)"), std::string::npos)
        << message;
    if (gpus == 0) {
      EXPECT_NE(message.find(why), std::string::npos) << message;
    }
  }
}

}  // namespace
}  // namespace spmd::kernels::cuda
