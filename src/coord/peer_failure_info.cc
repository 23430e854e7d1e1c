#include <fmt/format.h>

#include "spmd/distributed.h"

namespace spmd::distributed {

std::string PeerFailureInfo::to_string() const {
  if (process_id < 0) return fmt::format("coordination service at {}: {}", host, reason);
  return fmt::format("process {} (host {}, pid {}) failed: {}", process_id, host, pid, reason);
}

}  // namespace spmd::distributed
