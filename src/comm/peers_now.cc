#include "comm/peers_now.h"

#include <fmt/format.h>

#include <exception>

#include "coord/coord_client.h"
#include "coord/status_board.h"

namespace spmd {
namespace {

constexpr size_t kDescribed = 8;

}  // namespace

std::string describe_peers_now(const CoordClient* coord, const std::vector<int>& processes) {
  if (coord == nullptr || processes.empty() || coord->aborted()) return "";
  try {
    const wire::StatusTable table = coord->status_table(kPeersNowTimeout);
    std::string out = " Now:";
    size_t described = 0;
    for (int p : processes) {
      if (p < 0 || p >= table.processes_size() || described == kDescribed) continue;
      out += (described++ == 0 ? " " : "; ") + StatusBoard::describe(table.processes(p));
    }
    if (processes.size() > described) {
      out += fmt::format("; and {} more", processes.size() - described);
    }
    return described == 0 ? "" : out + ".";
  } catch (const std::exception&) {
    return "";  // the error stands without it
  }
}

}  // namespace spmd
