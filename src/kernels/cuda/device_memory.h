// The CUDA backend's memory methods (Backend::allocate, copy and bind_thread, kernels/backend.h):
// blocks from the GPU's stream-ordered pool (GpuContext), copies as copy_plan.h plans them, and
// the thread's GPU bound with a GpuScope. Thread-safe.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <span>

#include "kernels/backend.h"
#include "spmd/memory_space.h"

namespace spmd::kernels::cuda {

// `bytes` of GPU `memory.local_hardware_id`'s memory, given back to its pool (after the work
// queued on its stream) when the last owner lets go. Null for 0 bytes.
std::shared_ptr<std::byte> allocate_device(MemorySpace memory, size_t bytes);
// Backend::copy's contract, for host memory and this process's GPUs.
void copy_memory(const std::byte* from, MemorySpace from_memory, std::byte* to,
                 MemorySpace to_memory, size_t bytes);
// Backend::copy_pieces within GPU `memory.local_hardware_id`'s memory: one cudaMemcpyBatchAsync on
// its stream (in stream order), or, where the driver refuses batches (older than CUDA 12.8), a
// cudaMemcpyAsync a piece, from then on; and a piece at a time inside a captured call.
void copy_pieces_on_device(MemorySpace memory, std::span<const Backend::CopyPiece> pieces);
// A GpuScope on the GPU of `memory`, held until the result is let go (on the same thread).
std::shared_ptr<void> bind_gpu(MemorySpace memory);
// Backend::stream: the cudaStream_t of GPU `memory.local_hardware_id`.
void* gpu_stream(MemorySpace memory);
// Backend::fence: an event recorded on that stream now, and a probe asking whether it has
// passed (a faulted stream's probe says passed; the fault is thrown where the host next waits).
std::function<bool()> gpu_fence(MemorySpace memory);
// Backend::synchronize: waits for that stream and throws the error its kernels reported.
void gpu_synchronize(MemorySpace memory);
// Backend::call_queued: GpuContext::call_queued of that GPU.
void gpu_call_queued(MemorySpace memory);

}  // namespace spmd::kernels::cuda
