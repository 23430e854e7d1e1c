#include "kernels/cuda/status.h"

#include <cublas_api.h>
#include <cuda_runtime_api.h>
#include <fmt/format.h>
#include <unistd.h>

#include <mutex>

#include "spmd/error.h"

namespace spmd::kernels::cuda {
namespace {

std::mutex label_mutex;
std::string& label_storage() {
  static std::string label;
  return label;
}

std::string default_label() {
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  return fmt::format("pid {} on host {}", getpid(), host);
}

std::string_view advice(StatusKind kind) {
  switch (kind) {
    case StatusKind::kOutOfMemory:
      return "the GPU's memory is full: free arrays this process holds (delete them), use smaller "
             "batches or shards, or spread the arrays over more devices";
    case StatusKind::kInvalidArgument:
      return "this is a bug in the caller or in spmd: report it with this message";
    case StatusKind::kUnavailable:
      return "check that this process sees a GPU (nvidia-smi, CUDA_VISIBLE_DEVICES) and that the "
             "driver is at least as new as the CUDA toolkit spmd was built with, or run on CPUs "
             "(SPMD_PLATFORMS=cpu)";
    case StatusKind::kDeviceFault:
      return "a kernel faulted and this process's GPU context is lost: restart the process "
             "(from the last checkpoint); if it recurs, run it under compute-sanitizer";
    case StatusKind::kOther:
      break;
  }
  return "the GPU may be unusable for this process: restart it, and report this message if it "
         "recurs";
}

}  // namespace

StatusKind classify_cuda(int code) {
  switch (static_cast<cudaError_t>(code)) {
    case cudaErrorMemoryAllocation:
      return StatusKind::kOutOfMemory;
    case cudaErrorInvalidValue:
    case cudaErrorInvalidDevicePointer:
    case cudaErrorInvalidMemcpyDirection:
    case cudaErrorInvalidConfiguration:
    case cudaErrorInvalidPitchValue:
    case cudaErrorInvalidResourceHandle:
      return StatusKind::kInvalidArgument;
    case cudaErrorNoDevice:
    case cudaErrorInvalidDevice:
    case cudaErrorInsufficientDriver:
    case cudaErrorCallRequiresNewerDriver:
    case cudaErrorSystemDriverMismatch:
    case cudaErrorDevicesUnavailable:
    case cudaErrorInitializationError:
    case cudaErrorNoKernelImageForDevice:
    case cudaErrorUnsupportedPtxVersion:
      return StatusKind::kUnavailable;
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorMisalignedAddress:
    case cudaErrorIllegalInstruction:
    case cudaErrorInvalidPc:
    case cudaErrorHardwareStackError:
    case cudaErrorAssert:
    case cudaErrorLaunchTimeout:
    case cudaErrorECCUncorrectable:
      return StatusKind::kDeviceFault;
    default:
      return StatusKind::kOther;
  }
}

StatusKind classify_cublas(int code) {
  switch (static_cast<cublasStatus_t>(code)) {
    case CUBLAS_STATUS_ALLOC_FAILED:
      return StatusKind::kOutOfMemory;
    case CUBLAS_STATUS_INVALID_VALUE:
    case CUBLAS_STATUS_NOT_SUPPORTED:
      return StatusKind::kInvalidArgument;
    case CUBLAS_STATUS_NOT_INITIALIZED:
    case CUBLAS_STATUS_ARCH_MISMATCH:
      return StatusKind::kUnavailable;
    case CUBLAS_STATUS_EXECUTION_FAILED:
    case CUBLAS_STATUS_MAPPING_ERROR:
      return StatusKind::kDeviceFault;
    default:
      return StatusKind::kOther;
  }
}

void set_process_label(std::string label) {
  std::lock_guard lock(label_mutex);
  label_storage() = std::move(label);
}

std::string process_label() {
  std::lock_guard lock(label_mutex);
  if (label_storage().empty()) label_storage() = default_label();
  return label_storage();
}

std::string status_message(StatusKind kind, std::string_view call, int device,
                           std::string_view status, std::string_view text) {
  const std::string where = device >= 0 ? fmt::format("GPU {} of {}", device, process_label())
                                        : fmt::format("{}", process_label());
  return fmt::format("{} failed on {}: {} ({}); {}", call, where, text, status, advice(kind));
}

void throw_status(StatusKind kind, std::string_view call, int device, std::string_view status,
                  std::string_view text) {
  const std::string message = status_message(kind, call, device, status, text);
  switch (kind) {
    case StatusKind::kOutOfMemory:
      throw ResourceExhausted(message);
    case StatusKind::kInvalidArgument:
      throw InvalidArgument(message);
    case StatusKind::kUnavailable:
      throw FailedPrecondition(message);
    default:
      throw Error(message);
  }
}

void check_cuda(int code, std::string_view call, int device) {
  if (code == 0) return;
  const auto error = static_cast<cudaError_t>(code);
  throw_status(classify_cuda(code), call, device, cudaGetErrorName(error),
               cudaGetErrorString(error));
}

void check_cublas(int code, std::string_view call, int device) {
  if (code == 0) return;
  const auto status = static_cast<cublasStatus_t>(code);
  throw_status(classify_cublas(code), call, device, cublasGetStatusName(status),
               cublasGetStatusString(status));
}

}  // namespace spmd::kernels::cuda
