#include "kernels/cuda/device_memory.h"

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <cstring>

#include "kernels/cuda/copy_plan.h"
#include "kernels/cuda/gpu_context.h"
#include "kernels/cuda/gpu_scope.h"
#include "kernels/cuda/status.h"
#include "spmd/error.h"

namespace spmd::kernels::cuda {
namespace {

GpuContext& gpu_of(MemorySpace memory) {
  if (memory.kind != MemorySpace::Kind::kDevice) {
    throw InvalidArgument(
        fmt::format("the CUDA backend has no {} memory of its own", memory.to_string()));
  }
  return GpuContext::get(memory.local_hardware_id);
}

cudaMemcpyKind kind_of(CopyPlan::Kind kind) {
  switch (kind) {
    case CopyPlan::Kind::kHostToDevice:
      return cudaMemcpyHostToDevice;
    case CopyPlan::Kind::kDeviceToHost:
      return cudaMemcpyDeviceToHost;
    default:
      return cudaMemcpyDeviceToDevice;
  }
}

}  // namespace

std::shared_ptr<std::byte> allocate_device(MemorySpace memory, size_t bytes) {
  GpuContext& gpu = gpu_of(memory);
  auto* p = static_cast<std::byte*>(gpu.allocate(bytes));
  return {p, [&gpu](std::byte* q) { gpu.free(q); }};
}

void copy_memory(const std::byte* from, MemorySpace from_memory, std::byte* to,
                 MemorySpace to_memory, size_t bytes) {
  const CopyPlan plan = plan_copy(from_memory, to_memory);
  if (plan.kind == CopyPlan::Kind::kHostToHost) {
    if (bytes > 0) std::memcpy(to, from, bytes);
    return;
  }
  if (plan.drain_gpu >= 0) GpuContext::get(plan.drain_gpu).synchronize();
  GpuContext& gpu = GpuContext::get(plan.stream_gpu);
  if (bytes > 0) {
    if (plan.kind == CopyPlan::Kind::kPeer) {
      check_cuda(cudaMemcpyPeerAsync(to, to_memory.local_hardware_id, from,
                                     from_memory.local_hardware_id, bytes, gpu.stream()),
                 "cudaMemcpyPeerAsync", gpu.ordinal());
    } else {
      check_cuda(
          cudaMemcpyAsync(to, from, bytes, kind_of(plan.kind), gpu.stream()),
          fmt::format("cudaMemcpyAsync({} to {})", from_memory.to_string(), to_memory.to_string()),
          gpu.ordinal());
    }
  }
  if (plan.host_waits) gpu.synchronize();
}

std::shared_ptr<void> bind_gpu(MemorySpace memory) {
  return std::make_shared<GpuScope>(gpu_of(memory));
}

}  // namespace spmd::kernels::cuda
