// Which GPU the calling thread computes on. The device seam's methods (kernels/backend.h) take
// no device, as the CPU's need none; a thread that runs a GPU device's work binds that GPU for
// the duration (the runtime's device threads will, as each CPU device thread has its own), and
// the CUDA backend's methods use the bound one. Scopes nest per thread, the last one made ending
// first.
#pragma once

#include "kernels/cuda/gpu_context.h"

namespace spmd::kernels::cuda {

class GpuScope {
 public:
  explicit GpuScope(GpuContext& gpu);
  ~GpuScope();
  GpuScope(const GpuScope&) = delete;
  GpuScope& operator=(const GpuScope&) = delete;

  // The innermost scope's GPU on this thread; FailedPrecondition saying so when there is none.
  static GpuContext& current();

 private:
  GpuContext* previous_;
};

}  // namespace spmd::kernels::cuda
