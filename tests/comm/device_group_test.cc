// comm/device_group.h, the runtime's device collectives of one group, on one rank against the
// CPU communicator that keeps NCCL's contract (fake_device_communicator.h): a collective waits
// for its fence and counts, a creation waits for every rank to join, a collective that never
// finishes is DeadlineExceeded naming it and this process and aborts the communicator, the next
// call rebuilds a new generation that works, an asynchronous error is the library's message
// (PeerFailure when a peer was lost), and a peer the coordination service reports dead is
// PeerFailure before any deadline.
#include "comm/device_group.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "comm/fake_device_communicator.h"
#include "spmd/communicator.h"
#include "spmd/error.h"

namespace spmd::test {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// Makes one fake communicator per generation; each generation's control is the test's.
class FakeFactory final : public DeviceCommFactory {
 public:
  std::string name() const override { return "fake"; }
  std::string make_id() const override { return "id" + std::to_string(ids_++); }
  std::unique_ptr<DeviceCommunicator> make(const DeviceCommSpec& spec) const override {
    auto control = std::make_shared<FakeDeviceCommunicator::Control>();
    control->joined = join_at_once;
    control->finish_at_once = finish_at_once;
    controls.push_back(control);
    made_ids.push_back(spec.id);
    auto comm = std::make_unique<FakeDeviceCommunicator>(control, spec.rank, spec.size);
    latest = comm.get();
    return comm;
  }

  bool join_at_once = true;
  bool finish_at_once = true;
  mutable std::vector<std::shared_ptr<FakeDeviceCommunicator::Control>> controls;
  mutable std::vector<std::string> made_ids;
  mutable FakeDeviceCommunicator* latest = nullptr;

 private:
  mutable int ids_ = 0;
};

struct Group {
  FakeFactory factory;
  std::atomic<bool> dead{false};
  std::unique_ptr<DeviceGroup> group;

  explicit Group(milliseconds deadline = milliseconds(300)) {
    DeviceGroupConfig config;
    config.deadline = deadline;
    config.who = "process 0 on host a";
    config.processes = {0};
    config.peer_dead = [this](std::string* report) {
      if (!dead.load()) return false;
      *report = "process 1 (host b, pid 42) failed: connection lost";
      return true;
    };
    DeviceQueue queue{nullptr, [this] { return factory.latest->last_done(); }};
    group = std::make_unique<DeviceGroup>(world(), MemorySpace::device(0), factory,
                                          std::move(queue), std::move(config));
  }
  void all_reduce() {
    float x = 1;
    group->all_reduce(&x, &x, 1, DType::kFloat32, ReduceOp::kSum);
  }
};

template <class E>
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong class: " << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return "";
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(DeviceGroup, NothingIsMadeBeforeTheFirstCallAndEachFinishedCallCounts) {
  Group g;
  EXPECT_EQ(g.group->generation(), -1);
  EXPECT_TRUE(g.factory.controls.empty());
  g.all_reduce();
  g.all_reduce();
  EXPECT_EQ(g.group->generation(), 0);
  EXPECT_EQ(g.group->completed(), 2u);
  ASSERT_EQ(g.factory.controls.size(), 1u);
  EXPECT_EQ(g.factory.controls[0]->queued.size(), 2u);
  EXPECT_EQ(g.factory.controls[0]->aborts, 0);
}

TEST(DeviceGroup, ACallWaitsForItsFenceAndForEveryRankToJoin) {
  Group g(milliseconds(5000));
  g.factory.join_at_once = false;
  g.factory.finish_at_once = false;
  std::atomic<bool> returned{false};
  std::thread caller([&] {
    g.all_reduce();
    returned = true;
  });
  while (g.factory.controls.empty()) std::this_thread::sleep_for(milliseconds(1));
  auto control = g.factory.controls[0];
  std::this_thread::sleep_for(milliseconds(50));
  EXPECT_TRUE(control->queued.empty()) << "queued before every rank joined";
  control->join();
  for (;;) {
    {
      std::lock_guard lock(control->mutex);
      if (!control->queued.empty()) break;
    }
    std::this_thread::sleep_for(milliseconds(1));
  }
  std::this_thread::sleep_for(milliseconds(50));
  EXPECT_FALSE(returned.load()) << "returned before the collective finished";
  control->finish(0);
  caller.join();
  EXPECT_TRUE(returned.load());
  EXPECT_EQ(g.group->completed(), 1u);
}

TEST(DeviceGroup, ACollectiveThatNeverFinishesIsDeadlineExceededAndTheNextCallRebuilds) {
  Group g;
  g.all_reduce();
  g.factory.finish_at_once = false;
  g.factory.controls[0]->finish_at_once = false;
  const auto t0 = Clock::now();
  const std::string message = error_of<DeadlineExceeded>([&] { g.all_reduce(); });
  const auto waited = Clock::now() - t0;
  EXPECT_GE(waited, milliseconds(300));
  EXPECT_LT(waited, milliseconds(300) + std::chrono::seconds(5));
  EXPECT_TRUE(has(message, "all_reduce #1 (sum, float32 x 1)")) << message;
  EXPECT_TRUE(has(message, "process 0 on host a")) << message;
  EXPECT_TRUE(has(message, "did not finish within")) << message;
  EXPECT_EQ(g.factory.controls[0]->aborts, 1) << "the stalled communicator was not aborted";
  // The next call: a new generation with a new id, whose collectives finish.
  g.factory.finish_at_once = true;
  g.all_reduce();
  EXPECT_EQ(g.group->generation(), 1);
  ASSERT_EQ(g.factory.made_ids.size(), 2u);
  EXPECT_NE(g.factory.made_ids[0], g.factory.made_ids[1]);
  EXPECT_EQ(g.group->completed(), 2u);
}

TEST(DeviceGroup, ACreationNobodyJoinsIsDeadlineExceededNamingIt) {
  Group g;
  g.factory.join_at_once = false;
  const std::string message = error_of<DeadlineExceeded>([&] { g.all_reduce(); });
  EXPECT_TRUE(has(message, "creating the fake communicator")) << message;
  EXPECT_EQ(g.factory.controls[0]->aborts, 1);
}

TEST(DeviceGroup, AnAsynchronousErrorIsTheLibrarysMessage) {
  Group g;
  g.all_reduce();
  g.factory.controls[0]->fail("unhandled cuda error", false);
  std::string message = error_of<Error>([&] { g.all_reduce(); });
  EXPECT_TRUE(has(message, "unhandled cuda error")) << message;
  // A peer lost, in the next generation: PeerFailure.
  g.all_reduce();
  EXPECT_EQ(g.group->generation(), 1);
  g.factory.controls[1]->fail("remote process exited", true);
  message = error_of<PeerFailure>([&] { g.all_reduce(); });
  EXPECT_TRUE(has(message, "remote process exited")) << message;
}

TEST(DeviceGroup, APeerReportedDeadIsPeerFailureBeforeTheDeadline) {
  Group g(milliseconds(60000));
  g.all_reduce();
  g.factory.controls[0]->finish_at_once = false;
  g.dead = true;
  const auto t0 = Clock::now();
  const std::string message = error_of<PeerFailure>([&] { g.all_reduce(); });
  EXPECT_LT(Clock::now() - t0, std::chrono::seconds(5));
  EXPECT_TRUE(has(message, "process 1 (host b, pid 42) failed: connection lost")) << message;
  EXPECT_TRUE(has(message, "all_reduce #1")) << message;
  EXPECT_EQ(g.factory.controls[0]->aborts, 1);
}

}  // namespace
}  // namespace spmd::test
