// The staged copies' bookkeeping (src/kernels/cuda/staging_ring.h), on the CPU: a device whose
// fences pass when the test says, so each rule of reuse is seen to hold.
#include <gtest/gtest.h>

#include <cstdlib>
#include <set>
#include <vector>

#include "kernels/cuda/staging_ring.h"
#include "spmd/error.h"

namespace spmd::kernels::cuda {
namespace {

class FakeDevice final : public StagingDevice {
 public:
  void* allocate_pinned(size_t bytes) override {
    ++allocations;
    return std::malloc(bytes);
  }
  void free_pinned(void* buffer) noexcept override {
    ++frees;
    std::free(buffer);
  }
  void mark(int slot) override { pending.insert(slot); }
  bool passed(int slot) override { return !pending.contains(slot); }
  void wait(int slot) override {
    waited.push_back(slot);
    pending.erase(slot);  // the copy it followed is done
  }
  void finish(int slot) { pending.erase(slot); }

  int allocations = 0, frees = 0;
  std::set<int> pending;    // slots whose fence has not passed
  std::vector<int> waited;  // slots waited for, in order
};

TEST(StagingRing, ABufferIsReusedOnlyOnceItsCopyIsDone) {
  FakeDevice device;
  StagingRing ring(device, 64, 2);
  const StagingRing::Slot a = ring.acquire();
  ASSERT_NE(a.data, nullptr);
  ring.release(a);  // its copy queued, not done
  const StagingRing::Slot b = ring.acquire();
  EXPECT_NE(b.index, a.index);  // the other buffer, made now
  EXPECT_EQ(device.allocations, 2);
  ring.release(b);
  device.finish(a.index);
  const StagingRing::Slot c = ring.acquire();
  EXPECT_EQ(c.index, a.index);  // a's copy is done: reused, nothing waited for
  EXPECT_TRUE(device.waited.empty());
  EXPECT_EQ(device.allocations, 2);
  ring.release(c);
}

TEST(StagingRing, WithEveryBufferInFlightTheOldestIsWaitedFor) {
  FakeDevice device;
  StagingRing ring(device, 64, 3);
  std::vector<int> order;
  for (int i = 0; i < 3; ++i) {
    const StagingRing::Slot s = ring.acquire();
    order.push_back(s.index);
    ring.release(s);
  }
  const StagingRing::Slot next = ring.acquire();
  ASSERT_EQ(device.waited.size(), 1u);
  EXPECT_EQ(device.waited[0], order[0]);  // the first released, the first to finish
  EXPECT_EQ(next.index, order[0]);
  ring.release(next);
  const StagingRing::Slot after = ring.acquire();
  EXPECT_EQ(after.index, order[1]);  // then the next oldest
  ring.release(after);
}

TEST(StagingRing, WithEveryBufferHeldACallerCopiesWithoutStaging) {
  FakeDevice device;
  StagingRing ring(device, 64, 2);
  const StagingRing::Slot a = ring.acquire(), b = ring.acquire();
  const StagingRing::Slot none = ring.acquire();
  EXPECT_EQ(none.data, nullptr);
  EXPECT_TRUE(device.waited.empty());  // never waits for a buffer another caller holds
  ring.release(none);                  // nothing to release
  ring.release(a);
  ring.release(b);
}

TEST(StagingRing, TheRingWaitsForCopiesInFlightBeforeFreeingItsBuffers) {
  FakeDevice device;
  {
    StagingRing ring(device, 64, 4);
    const StagingRing::Slot a = ring.acquire();
    ring.release(a);
    (void)ring.acquire();  // made and held, never released
  }
  EXPECT_EQ(device.allocations, 2);  // made on first use only
  EXPECT_EQ(device.frees, 2);
  EXPECT_EQ(device.waited.size(), 1u);  // the one in flight
  EXPECT_THROW(StagingRing(device, 0, 2), InvalidArgument);
}

// Device to host: the holder keeps the buffer until it has read it back, whatever its fence.
TEST(StagingRing, ABufferReadBackStaysHeldUntilGivenBack) {
  FakeDevice device;
  StagingRing ring(device, 64, 1);
  const StagingRing::Slot s = ring.acquire();
  ring.fence(s);
  EXPECT_TRUE(device.pending.contains(s.index));
  EXPECT_EQ(ring.acquire().data, nullptr);  // held: not handed out, not waited for
  ring.wait_held(s);
  EXPECT_FALSE(device.pending.contains(s.index));
  EXPECT_EQ(ring.acquire().data, nullptr);  // its fence passed, but it is still held
  ring.give_back(s);
  EXPECT_EQ(ring.acquire().index, s.index);
}

TEST(StagingRing, ChunksCoverACopyInOrder) {
  using Chunks = std::vector<std::pair<size_t, size_t>>;
  EXPECT_EQ(StagingRing::chunks(10, 4), (Chunks{{0, 4}, {4, 4}, {8, 2}}));
  EXPECT_EQ(StagingRing::chunks(8, 4), (Chunks{{0, 4}, {4, 4}}));
  EXPECT_EQ(StagingRing::chunks(3, 4), (Chunks{{0, 3}}));
  EXPECT_TRUE(StagingRing::chunks(0, 4).empty());
}

}  // namespace
}  // namespace spmd::kernels::cuda
