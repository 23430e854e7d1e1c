// The device-collectives seam over NCCL (comm/device_collectives.h): a communicator created
// non-blocking (ncclCommInitRankConfig with blocking = 0), whose state is NCCL's async error,
// aborted by ncclCommAbort. Every NCCL status becomes an spmd error naming the call, the GPU and
// the process (nccl_status.h). The unique id travels however the caller likes (bytes); spmd's
// runtime passes it through the coordination service's key-value store, as XLA does.
#pragma once

#include <array>
#include <memory>
#include <string>

#include "comm/device_collectives.h"

namespace spmd {

// NCCL's unique id of a new communicator: made by one rank, given to every other.
using NcclId = std::array<char, 128>;

// A fresh id (ncclGetUniqueId: it opens the bootstrap socket this process will serve).
NcclId make_nccl_id();

// Rank `rank` of `size` of the communicator `id`, on GPU `gpu` (a CUDA device ordinal). Returns
// at once: the communicator is kInProgress until every rank has joined (poll()).
std::unique_ptr<DeviceCommunicator> make_nccl_communicator(const NcclId& id, int rank, int size,
                                                           int gpu);

// "2.28.9": the NCCL this process loaded.
std::string nccl_version();

}  // namespace spmd
