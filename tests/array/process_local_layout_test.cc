// JAX's rules for process-local data, with the process index as an argument so that clusters of
// several processes are checked in one.
#include "array/process_local_layout.h"

#include <gtest/gtest.h>

namespace spmd {
namespace {

// Devices 0..n-1; device i belongs to process owner[i].
std::vector<Device> owned(const std::vector<int>& owner) {
  std::vector<Device> out;
  for (size_t i = 0; i < owner.size(); ++i) {
    out.emplace_back(static_cast<int>(i), owner[i], 0, "cpu", "h");
  }
  return out;
}

TEST(ProcessLocalLayout, RowsSplitAcrossProcessesInferTheGlobalShape) {
  NamedSharding rows(Mesh(owned({0, 0, 1, 1}), {"x"}), P("x"));
  auto layout = process_local_layout(rows, {4, 3}, std::nullopt, 1);
  EXPECT_EQ(layout.global_shape, (Shape{8, 3}));
  ASSERT_EQ(layout.shards.size(), 2u);
  EXPECT_EQ(layout.shards[0].global.index, (Index{{4, 6}, {0, 3}}));
  EXPECT_EQ(layout.shards[0].local, (Index{{0, 2}, {0, 3}}));
  EXPECT_EQ(layout.shards[1].local, (Index{{2, 4}, {0, 3}}));
}

TEST(ProcessLocalLayout, NonContiguousShardsArePackedInGlobalOrder) {
  // Process 0 owns shards 0 and 2 of 4.
  NamedSharding rows(Mesh(owned({0, 1, 0, 1}), {"x"}), P("x"));
  auto layout = process_local_layout(rows, {4}, std::nullopt, 0);
  EXPECT_EQ(layout.global_shape, (Shape{8}));
  EXPECT_EQ(layout.shards[1].global.index, (Index{{4, 6}}));
  EXPECT_EQ(layout.shards[1].local, (Index{{2, 4}}));
}

TEST(ProcessLocalLayout, AWholeDimensionIsTakenAsGlobal) {
  // Columns split over a mesh axis that lies inside each process: each process covers them all.
  NamedSharding grid(Mesh(owned({0, 0, 1, 1}), {2, 2}, {"p", "d"}), P("p", "d"));
  auto layout = process_local_layout(grid, {3, 6}, std::nullopt, 1);
  EXPECT_EQ(layout.global_shape, (Shape{6, 6}));
  EXPECT_EQ(layout.shards[1].global.index, (Index{{3, 6}, {3, 6}}));
  EXPECT_EQ(layout.shards[1].local, (Index{{0, 3}, {3, 6}}));
}

TEST(ProcessLocalLayout, GivenGlobalShapeAcceptsWholeOrShareAndNothingElse) {
  NamedSharding rows(Mesh(owned({0, 0, 1, 1}), {"x"}), P("x"));
  // Every process passing the whole array is allowed (each takes its part).
  auto whole = process_local_layout(rows, {8, 2}, Shape{8, 2}, 1);
  EXPECT_EQ(whole.shards[0].local, (Index{{4, 6}, {0, 2}}));
  try {
    process_local_layout(rows, {3, 2}, Shape{8, 2}, 0);
    FAIL();
  } catch (const InvalidArgument& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("dimension 0: the local size 3 is neither the global size 8 nor this "
                       "process's share 4"),
              std::string::npos)
        << msg;
  }
}

TEST(ProcessLocalLayout, UnevenAndImpossibleLayoutsSayWhy) {
  NamedSharding rows(Mesh(owned({0, 0, 1, 1}), {"x"}), P("x"));
  EXPECT_THROW(process_local_layout(rows, {3}, std::nullopt, 0), InvalidArgument);  // 3 of 2 shards
  EXPECT_THROW(process_local_layout(rows, {5}, Shape{10}, 0), IndivisibleError);
  EXPECT_THROW(process_local_layout(rows, {2, 2}, Shape{8}, 0), InvalidArgument);   // rank
  EXPECT_THROW(process_local_layout(rows, {4}, std::nullopt, 5), InvalidArgument);  // no devices
}

TEST(ProcessLocalLayout, ReplicatedDataIsTheWholeArrayEverywhere) {
  NamedSharding replicated(Mesh(owned({0, 1}), {"x"}), P());
  auto layout = process_local_layout(replicated, {5, 2}, std::nullopt, 1);
  EXPECT_EQ(layout.global_shape, (Shape{5, 2}));
  EXPECT_EQ(layout.shards[0].global.replica_id, 1);
}

TEST(ProcessLocalLayout, AScalarIsPlacedOnEveryDeviceOfTheProcess) {
  // A scalar has no dimension to find a process's positions along: its devices still count.
  NamedSharding replicated(Mesh(owned({0, 0, 1, 1}), {"x"}), P());
  auto layout = process_local_layout(replicated, {}, std::nullopt, 1);
  EXPECT_EQ(layout.global_shape, Shape{});
  ASSERT_EQ(layout.shards.size(), 2u);
  EXPECT_EQ(layout.shards[0].global.device.id(), 2);
  EXPECT_TRUE(layout.shards[1].local.empty());
  EXPECT_THROW(process_local_layout(replicated, {}, std::nullopt, 3), InvalidArgument);
}

}  // namespace
}  // namespace spmd
