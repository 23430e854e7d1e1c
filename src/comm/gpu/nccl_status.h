// NCCL's statuses as spmd errors naming the call, the GPU and the process: a system or remote
// error (a peer gone, a network failure) is PeerFailure; invalid arguments or usage are
// InvalidArgument; an internal error or an unhandled CUDA error is Error. Pure; thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace spmd {

// The message for a failed `call` (`code` an ncclResult_t, nonzero and not ncclInProgress),
// with NCCL's last error text `detail` when it has one.
std::string nccl_message(int code, std::string_view call, int gpu, std::string_view detail);
// Throws the spmd error for `code`; does nothing for ncclSuccess and ncclInProgress.
void check_nccl(int code, std::string_view call, int gpu, std::string_view detail = {});

}  // namespace spmd
