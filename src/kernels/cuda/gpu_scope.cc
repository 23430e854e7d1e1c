#include "kernels/cuda/gpu_scope.h"

#include "spmd/error.h"

namespace spmd::kernels::cuda {
namespace {

thread_local GpuContext* bound = nullptr;

}  // namespace

GpuScope::GpuScope(GpuContext& gpu) : previous_(bound) { bound = &gpu; }

GpuScope::~GpuScope() { bound = previous_; }

GpuContext& GpuScope::current() {
  if (bound == nullptr) {
    throw FailedPrecondition(
        "a GPU kernel was called on a thread bound to no GPU: bind one with "
        "kernels::cuda::GpuScope before computing (this is a bug in spmd if it reaches a user)");
  }
  return *bound;
}

}  // namespace spmd::kernels::cuda
