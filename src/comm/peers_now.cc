#include "comm/peers_now.h"

#include <exception>

#include "coord/coord_client.h"
#include "coord/status_board.h"

namespace spmd {

std::string describe_peers_now(const CoordClient* coord, const std::vector<int>& processes) {
  if (coord == nullptr || processes.empty() || coord->aborted()) return "";
  try {
    return StatusBoard::describe_now(coord->status_table(kPeersNowTimeout), processes);
  } catch (const std::exception&) {
    return "";  // the error stands without it
  }
}

}  // namespace spmd
