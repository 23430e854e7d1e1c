// The bookkeeping of the CUDA backend's replayed calls (kernels/cuda/replay_plan.h), on the CPU:
// the arena's pieces, and what each call of a program does as it is measured, captured, runs out
// of arena or cannot be captured.
#include <gtest/gtest.h>

#include <array>
#include <vector>

#include "kernels/cuda/replay_plan.h"

namespace spmd::kernels::cuda {
namespace {

using Mode = ReplayPolicy::Mode;

TEST(BumpArena, HandsOutAlignedPiecesFrontToBackUntilFullAndCountsWhatWasAsked) {
  std::vector<std::byte> memory(1024);
  BumpArena arena(memory.data(), memory.size());
  std::byte* a = arena.take(1);
  std::byte* b = arena.take(300);
  EXPECT_EQ(a, memory.data());
  EXPECT_EQ(b, memory.data() + 256) << "pieces start 256 bytes apart at least";
  EXPECT_EQ(arena.used(), 256u + 512u);
  EXPECT_EQ(arena.take(257), nullptr) << "512 bytes would not fit in the 256 left";
  EXPECT_EQ(arena.asked(), 256u + 512u + 512u) << "the piece that did not fit is counted";
  EXPECT_NE(arena.take(256), nullptr) << "a smaller one still fits";
  EXPECT_EQ(arena.take(0), nullptr);
  EXPECT_TRUE(arena.holds(memory.data()));
  EXPECT_TRUE(arena.holds(memory.data() + 1023));
  EXPECT_FALSE(arena.holds(memory.data() + 1024));
  EXPECT_FALSE(arena.holds(nullptr));
  arena.reset();
  EXPECT_EQ(arena.used(), 0u);
  EXPECT_EQ(arena.asked(), 0u);
  EXPECT_EQ(arena.take(1024), memory.data()) << "after reset, from the start again";
}

TEST(ReplayPolicy, MeasuresFirstThenCapturesIntoAnArenaAnEighthLarger) {
  ReplayPolicy policy(1 << 20);
  EXPECT_EQ(policy.mode(), Mode::kMeasure);
  policy.measured(8192);
  EXPECT_EQ(policy.mode(), Mode::kCapture);
  EXPECT_EQ(policy.arena_bytes(), 8192u + 1024u);
  policy.measured(1 << 19);  // only the first measurement counts
  EXPECT_EQ(policy.arena_bytes(), 8192u + 1024u);
}

TEST(ReplayPolicy, ACallThatAllocatesNothingIsCapturedWithNoArena) {
  ReplayPolicy policy(1 << 20);
  policy.measured(0);
  EXPECT_EQ(policy.mode(), Mode::kCapture);
  EXPECT_EQ(policy.arena_bytes(), 0u);
}

TEST(ReplayPolicy, OverflowsDoubleTheArenaThenGiveUp) {
  ReplayPolicy policy(1 << 30);
  policy.measured(1000);  // arena 1280 (1125 rounded up to 256)
  ASSERT_EQ(policy.arena_bytes(), 1280u);
  policy.overflowed(5000);  // asked 5000 before it stopped: twice that, an eighth more
  EXPECT_EQ(policy.mode(), Mode::kCapture);
  EXPECT_EQ(policy.arena_bytes(), BumpArena::rounded(10000 + 1250));
  policy.overflowed(100);  // the second: direct for good
  EXPECT_EQ(policy.mode(), Mode::kDirect);
}

TEST(ReplayPolicy, TooMuchMemoryOrAFailedCaptureOrNoneAllowedMeansDirect) {
  ReplayPolicy big(4096);
  big.measured(4000);  // 4500 rounded is past 4096
  EXPECT_EQ(big.mode(), Mode::kDirect);
  ReplayPolicy failing(1 << 20);
  failing.measured(100);
  failing.failed();
  EXPECT_EQ(failing.mode(), Mode::kDirect);
  failing.overflowed(100);  // nothing brings it back
  EXPECT_EQ(failing.mode(), Mode::kDirect);
  EXPECT_EQ(ReplayPolicy(0).mode(), Mode::kDirect) << "SPMD_GPU_GRAPHS=0";
}

TEST(GraphSlots, FindsAKeyItHoldsAndGivesANewKeyAnEmptySlotElseTheLeastRecentlyUsed) {
  int a = 0, b = 0, c = 0;
  const void* k1[] = {&a, &b};
  const void* k2[] = {&b, &a};
  const void* k3[] = {&c};
  GraphSlots slots;
  EXPECT_EQ(slots.find(k1), -1);
  for (int i = 0; i < GraphSlots::kSlots; ++i) EXPECT_TRUE(slots.empty(i));
  slots.set(slots.victim(), k1);
  const int s1 = slots.find(k1);
  ASSERT_GE(s1, 0);
  EXPECT_EQ(slots.find(k2), -1) << "the same buffers in another order are another key";
  EXPECT_EQ(slots.find({}), -1) << "an empty key never matches";
  // Fill every slot: k1 first, then the rest; then use k1 again, so the second-oldest goes.
  std::vector<std::vector<const void*>> keys;
  std::array<int, GraphSlots::kSlots> marks{};
  for (int i = 1; i < GraphSlots::kSlots; ++i) {
    keys.push_back({&c, &marks[static_cast<size_t>(i)]});  // distinct by their second buffer
    const int v = slots.victim();
    EXPECT_TRUE(slots.empty(v)) << "an empty slot before any in use";
    slots.set(v, keys.back());
  }
  slots.touch(s1);
  const int v = slots.victim();
  EXPECT_EQ(v, slots.find(keys.front())) << "the least recently used: the first of the rest";
  slots.set(v, k3);
  EXPECT_EQ(slots.find(keys.front()), -1);
  EXPECT_EQ(slots.find(k3), v);
  EXPECT_EQ(slots.find(k1), s1);
  slots.forget(s1);
  EXPECT_EQ(slots.find(k1), -1);
  EXPECT_TRUE(slots.empty(s1));
  slots.clear();
  EXPECT_EQ(slots.find(k3), -1);
}

}  // namespace
}  // namespace spmd::kernels::cuda
