#include "array/reshard_plan.h"

#include <algorithm>

namespace spmd {

std::optional<Index> intersect(const Index& a, const Index& b) {
  Index out(a.size());
  for (size_t d = 0; d < a.size(); ++d) {
    out[d].start = std::max(a[d].start, b[d].start);
    out[d].stop = std::min(a[d].stop, b[d].stop);
    if (out[d].start >= out[d].stop) return std::nullopt;
  }
  return out;
}

std::vector<Transfer> plan_reshard(const std::vector<DeviceIndex>& from,
                                   const std::vector<DeviceIndex>& to) {
  // The distinct tiles of the source, each with its holders in device order.
  struct Tile {
    Index index;
    std::vector<Device> holders;
  };
  std::vector<Tile> tiles;
  for (const DeviceIndex& e : from) {
    auto it =
        std::find_if(tiles.begin(), tiles.end(), [&](const Tile& t) { return t.index == e.index; });
    if (it == tiles.end()) {
      tiles.push_back({e.index, {e.device}});
    } else {
      it->holders.push_back(e.device);
    }
  }
  std::vector<Transfer> plan;
  for (const DeviceIndex& dst : to) {
    for (const Tile& tile : tiles) {
      std::optional<Index> box = intersect(dst.index, tile.index);
      if (!box) continue;
      const Device* chosen = nullptr;
      for (const Device& h : tile.holders) {
        if (h == dst.device) chosen = &h;
      }
      for (const Device& h : tile.holders) {
        if (chosen == nullptr && h.process_index() == dst.device.process_index()) chosen = &h;
      }
      if (chosen == nullptr) chosen = &tile.holders[dst.device.id() % tile.holders.size()];
      plan.push_back({*chosen, dst.device, std::move(*box)});
    }
  }
  return plan;
}

}  // namespace spmd
