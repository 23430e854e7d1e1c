// The resharding plan is pure: for every pair of layouts, each element of each destination
// shard comes from exactly one source that holds it, and nothing crosses processes when a local
// holder exists.
#include "array/reshard_plan.h"

#include <gtest/gtest.h>

#include <map>

#include "spmd/sharding.h"

namespace spmd {
namespace {

// Two processes of two devices each on one host.
std::vector<Device> cluster() {
  std::vector<Device> d;
  for (int i = 0; i < 4; ++i) d.emplace_back(i, i / 2, i % 2, "cpu", "host");
  return d;
}

std::vector<std::shared_ptr<const Sharding>> layouts() {
  const auto d = cluster();
  const Mesh line(d, {"x"});
  const Mesh grid(d, {2, 2}, {"a", "b"});
  return {NamedSharding(line, P("x")).clone(),      NamedSharding(line, P(None, "x")).clone(),
          NamedSharding(grid, P("a", "b")).clone(), NamedSharding(grid, P("b")).clone(),
          NamedSharding(line, P()).clone(),         SingleDeviceSharding(d[3]).clone()};
}

bool contains(const Index& outer, const Index& inner) {
  for (size_t i = 0; i < outer.size(); ++i) {
    if (inner[i].start < outer[i].start || inner[i].stop > outer[i].stop) return false;
  }
  return true;
}

TEST(ReshardPlan, EveryDestinationElementComesFromExactlyOneHolder) {
  const Shape shape = {8, 12};
  for (const auto& from : layouts()) {
    for (const auto& to : layouts()) {
      const auto from_map = from->devices_indices_map(shape);
      const auto to_map = to->devices_indices_map(shape);
      const auto plan = plan_reshard(from_map, to_map);
      for (const DeviceIndex& dst : to_map) {
        std::vector<int> hits(static_cast<size_t>(shape_size(index_extents(dst.index))), 0);
        for (const Transfer& t : plan) {
          if (!(t.destination == dst.device)) continue;
          ASSERT_TRUE(contains(dst.index, t.box)) << from->to_string() << " -> " << to->to_string();
          // The source really holds the box.
          bool held = false;
          for (const DeviceIndex& src : from_map) {
            held |= src.device == t.source && contains(src.index, t.box);
          }
          ASSERT_TRUE(held);
          for (int64_t r = t.box[0].start; r < t.box[0].stop; ++r) {
            for (int64_t c = t.box[1].start; c < t.box[1].stop; ++c) {
              ++hits[static_cast<size_t>((r - dst.index[0].start) *
                                             (dst.index[1].stop - dst.index[1].start) +
                                         (c - dst.index[1].start))];
            }
          }
        }
        for (int h : hits) ASSERT_EQ(h, 1) << from->to_string() << " -> " << to->to_string();
      }
    }
  }
}

TEST(ReshardPlan, ADeviceAlreadyHoldingItsShardReceivesNothingFromOthers) {
  const Shape shape = {8, 12};
  const auto l = layouts();
  const auto map = l[0]->devices_indices_map(shape);
  const auto plan = plan_reshard(map, map);
  ASSERT_EQ(plan.size(), map.size());  // one part per device: its own shard
  for (const Transfer& t : plan) EXPECT_EQ(t.source, t.destination);
}

TEST(ReshardPlan, ReplicasInTheSameProcessAreCopiedLocally) {
  // From rows over devices to replicated: a device gets its own process's rows locally.
  const Shape shape = {8, 12};
  const auto l = layouts();
  const auto plan =
      plan_reshard(l[0]->devices_indices_map(shape), l[4]->devices_indices_map(shape));
  ASSERT_FALSE(plan.empty());
  for (const Transfer& t : plan) {
    const bool same_process = t.source.process_index() == t.destination.process_index();
    // Rows 0-3 live in process 0, rows 4-7 in process 1.
    const int owner = t.box[0].start < 4 ? 0 : 1;
    EXPECT_EQ(t.source.process_index(), owner);
    if (t.destination.process_index() == owner) {
      EXPECT_TRUE(same_process);
    }
  }
}

}  // namespace
}  // namespace spmd
