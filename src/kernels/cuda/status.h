// Every failed CUDA runtime or cuBLAS call as an spmd error that names the call, the GPU and the
// process, and says what to do.
//
// Out of memory is ResourceExhausted (JAX's RESOURCE_EXHAUSTED); a call given bad arguments is
// InvalidArgument; no usable GPU or driver is FailedPrecondition; a fault inside a kernel (an
// illegal address, a launch failure) is Error, saying that the GPU's context is lost for this
// process, as CUDA's "sticky" errors are. The classification is pure and is tested on the CPU
// (tests/kernels/cuda_status_test.cc). Thread-safe.
// Open to tools/: spmd-bench gpu times these kernels beside cuBLAS and a device copy.
#pragma once

#include <string>
#include <string_view>

namespace spmd::kernels::cuda {

enum class StatusKind { kOutOfMemory, kInvalidArgument, kUnavailable, kDeviceFault, kOther };

// What a cudaError_t or a cublasStatus_t (as an int, nonzero) means for the caller.
StatusKind classify_cuda(int code);
StatusKind classify_cublas(int code);

// "process 3 on host h", set by the runtime when it knows; until then "pid N on host h".
void set_process_label(std::string label);
std::string process_label();

// The message and the error of `kind` for a failed `call` on GPU `device` (-1: no particular
// GPU), whose library reported `status` ("cudaErrorMemoryAllocation") and `text`.
std::string status_message(StatusKind kind, std::string_view call, int device,
                           std::string_view status, std::string_view text);
[[noreturn]] void throw_status(StatusKind kind, std::string_view call, int device,
                               std::string_view status, std::string_view text);

// Throw the error for a failed CUDA runtime call (`code` a cudaError_t) or cuBLAS call (`code`
// a cublasStatus_t); do nothing for success. The typed overloads are in check.h.
void check_cuda(int code, std::string_view call, int device);
void check_cublas(int code, std::string_view call, int device);

}  // namespace spmd::kernels::cuda
