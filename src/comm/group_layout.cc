#include "comm/group_layout.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "spmd/error.h"

namespace spmd {

GroupLayout make_group_layout(std::span<const int> devices, uint64_t id, const DeviceView& view) {
  if (devices.empty()) throw InvalidArgument("a communicator needs at least one device");
  const int count = static_cast<int>(view.devices.size());
  std::vector<bool> seen(count, false);
  for (int d : devices) {
    if (d < 0 || d >= count) {
      throw InvalidArgument(
          fmt::format("device id {} does not exist: the cluster has devices 0 … {}", d, count - 1));
    }
    if (seen[d]) throw InvalidArgument(fmt::format("device id {} appears twice in the group", d));
    seen[d] = true;
  }
  GroupLayout g;
  g.id = id;
  g.devices.assign(devices.begin(), devices.end());
  std::map<int, std::vector<int>> by_process;
  for (int r = 0; r < g.size(); ++r) {
    by_process[view.devices[devices[r]].process_index()].push_back(r);
  }
  g.rank_position.resize(g.size());
  g.self = -1;
  for (auto& [process, ranks] : by_process) {
    const int position = static_cast<int>(g.processes.size());
    g.processes.push_back(process);
    g.hosts.push_back(view.devices[devices[ranks.front()]].host_id());
    for (int r : ranks) g.rank_position[r] = position;
    if (process == view.process_index) g.self = position;
    g.ranks_of.push_back(std::move(ranks));
  }
  if (g.self < 0) {
    throw FailedPrecondition(fmt::format(
        "process {} owns none of the devices of this group, so it cannot take part; create the "
        "communicator only in the processes that own its devices",
        view.process_index));
  }
  g.local_ranks = g.ranks_of[g.self];
  for (int p = 0; p < g.positions(); ++p) g.all_positions.push_back(p);
  return g;
}

uint64_t group_id_for(std::span<const int> devices, uint64_t generation) {
  // FNV-1a over the ids and the generation: stable across processes and builds.
  uint64_t h = 0xcbf29ce484222325ull;
  auto mix = [&h](uint64_t v) {
    for (int i = 0; i < 8; ++i) {
      h ^= (v >> (8 * i)) & 0xff;
      h *= 0x100000001b3ull;
    }
  };
  mix(devices.size());
  for (int d : devices) mix(static_cast<uint64_t>(d));
  mix(generation);
  return h;
}

}  // namespace spmd
