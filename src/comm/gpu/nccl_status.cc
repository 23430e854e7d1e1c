#include "comm/gpu/nccl_status.h"

#include <fmt/format.h>
#include <nccl.h>
#include <unistd.h>

#include "spmd/error.h"

namespace spmd {
namespace {

std::string this_process() {
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  return fmt::format("pid {} on host {}", getpid(), host);
}

std::string_view advice(ncclResult_t code) {
  switch (code) {
    case ncclSystemError:
    case ncclRemoteError:
      return "a peer process or the network between the GPUs failed: check the other processes' "
             "logs for the first error, then restart the job from its last checkpoint";
    case ncclInvalidArgument:
    case ncclInvalidUsage:
      return "this is a bug in spmd or in the caller: report it with this message";
    default:
      return "NCCL or the GPU failed: restart the process; NCCL_DEBUG=WARN says more";
  }
}

}  // namespace

std::string nccl_message(int code, std::string_view call, int gpu, std::string_view detail) {
  const auto result = static_cast<ncclResult_t>(code);
  return fmt::format("{} failed on GPU {} of {}: {}{}{}; {}", call, gpu, this_process(),
                     ncclGetErrorString(result), detail.empty() ? "" : ": ", detail,
                     advice(result));
}

void check_nccl(int code, std::string_view call, int gpu, std::string_view detail) {
  const auto result = static_cast<ncclResult_t>(code);
  if (result == ncclSuccess || result == ncclInProgress) return;
  const std::string message = nccl_message(code, call, gpu, detail);
  switch (result) {
    case ncclSystemError:
    case ncclRemoteError:
      throw PeerFailure(message);
    case ncclInvalidArgument:
    case ncclInvalidUsage:
      throw InvalidArgument(message);
    default:
      throw Error(message);
  }
}

}  // namespace spmd
