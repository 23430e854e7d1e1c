// How the CUDA backend carries out a copy between memories (Backend::copy, kernels/backend.h):
// which kind of cudaMemcpy, on which GPU's stream, after which other stream's work, and whether
// the host waits. Pure (no CUDA call), so its rules are tested on every machine
// (tests/kernels/cuda_copy_plan_test.cc); cuda_backend.cc follows it.
//
// The rules, from the seam's contract (the source may change once copy() returns; a host
// destination holds the bytes when it returns; a device destination holds them for every later
// call on that device):
// - host to device: queued on the destination GPU's stream. CUDA takes a pageable source into
//   its own staging before cudaMemcpyAsync returns, so the source may change at once.
// - device to host: queued on the source GPU's stream, behind the kernels that wrote the
//   source; the host waits for that stream, and a kernel's reported failure is thrown there.
// - device to device on one GPU: queued on its stream; no wait.
// - between two GPUs: the source GPU's stream is drained first (its kernels may still be writing
//   the source), then the copy is queued on the destination's stream (cudaMemcpyPeerAsync).
// - host to host: a plain memcpy.
#pragma once

#include "spmd/memory_space.h"

namespace spmd::kernels::cuda {

struct CopyPlan {
  enum class Kind { kHostToHost, kHostToDevice, kDeviceToHost, kOnDevice, kPeer };
  Kind kind = Kind::kHostToHost;
  int stream_gpu = -1;      // the GPU whose stream carries the copy; -1 for none
  int drain_gpu = -1;       // a GPU whose stream must finish before the copy is queued; -1: none
  bool host_waits = false;  // copy() returns only once the copy is done (then errors surface)
};

// The plan for a copy from `from` to `to`. Throws InvalidArgument for a device id below 0.
CopyPlan plan_copy(MemorySpace from, MemorySpace to);

}  // namespace spmd::kernels::cuda
