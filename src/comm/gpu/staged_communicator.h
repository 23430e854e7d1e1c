// The device-collectives seam (comm/device_collectives.h) over spmd's own transports: each
// collective copies the device buffer to pinned host memory, runs the host communicator's
// collective there (shared memory, TCP or UCX, with its mismatch check, deadline and failure
// reports), and copies the result back. It is what processes sharing one GPU use, which NCCL
// refuses, and so how a one-GPU machine tests multi-process GPU code.
//
// A collective waits for its device input and for the host collective, then queues the copy
// back on the stream and returns. A failed host collective throws as the host communicator does
// and leaves poll() kFailed (peer_lost for PeerFailure). abort() marks the communicator
// unusable; it does not interrupt a host collective in flight, which its own deadline bounds.
// The staging buffer is kept and grown; one caller thread at a time, as the seam says.
#pragma once

#include <memory>

#include "comm/device_collectives.h"
#include "spmd/communicator.h"

namespace spmd {

// Collectives of `host` (this process's participant) on device memory of GPU `gpu` (a CUDA
// device ordinal); streams are cudaStream_t of that GPU.
std::unique_ptr<DeviceCommunicator> make_staged_communicator(Communicator host, int gpu);

}  // namespace spmd
