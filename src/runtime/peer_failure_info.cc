#include "coord/coord_client.h"
#include "spmd/distributed.h"

namespace spmd::distributed {

// One wording for both: the coordination client's report and what users are handed.
std::string PeerFailureInfo::to_string() const {
  return FailureReport{process_id, host, pid, reason}.to_string();
}

}  // namespace spmd::distributed
