// comm/device_watchdog.h against a CPU communicator that keeps NCCL's contract
// (fake_device_communicator.h): a collective that finishes, a peer that stalls, an asynchronous
// error, a peer the coordination service reports dead, a creation nobody completes, abort, and
// a rebuild after which collectives run again; and the watchdog's own thread tripping within
// its deadline.
#include "comm/device_watchdog.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

#include "comm/fake_device_communicator.h"
#include "spmd/error.h"

namespace spmd::test {
namespace {

using Clock = DeviceWatchdog::Clock;
using std::chrono::seconds;

struct Guarded {
  std::shared_ptr<FakeDeviceCommunicator::Control> control =
      std::make_shared<FakeDeviceCommunicator::Control>();
  FakeDeviceCommunicator* fake = nullptr;
  std::unique_ptr<DeviceWatchdog> watchdog;
  Clock::time_point t0 = Clock::now();

  explicit Guarded(DeviceWatchdog::MissingRanks missing = {}) {
    auto comm = std::make_unique<FakeDeviceCommunicator>(control, 0, 2);
    fake = comm.get();
    watchdog = std::make_unique<DeviceWatchdog>(std::move(comm), seconds(30), "process 0 on host a",
                                                std::move(missing));
    control->join();
  }
  // Queues an all_reduce as collective `sequence` at t0 + `at`.
  void all_reduce(uint64_t sequence, Clock::duration at = {}) {
    watchdog->communicator().all_reduce(nullptr, nullptr, 1, DType::kFloat32, ReduceOp::kSum,
                                        nullptr);
    watchdog->queued(sequence, "all_reduce of 4 MiB float32", fake->last_done(), t0 + at);
  }
};

template <class E>
std::string recorded(const DeviceWatchdog& w) {
  try {
    w.rethrow();
  } catch (const E& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong class: " << e.what();
  }
  return "";
}

TEST(DeviceWatchdog, ACollectiveThatFinishesIsForgotten) {
  Guarded g;
  g.all_reduce(1);
  EXPECT_FALSE(g.watchdog->check(g.t0 + seconds(1)));
  EXPECT_EQ(g.watchdog->pending(), 1u);
  g.control->finish(0);
  EXPECT_FALSE(g.watchdog->check(g.t0 + seconds(31)));  // past the deadline, but finished
  EXPECT_EQ(g.watchdog->pending(), 0u);
  EXPECT_FALSE(g.watchdog->tripped());
  EXPECT_EQ(g.control->aborts, 0);
}

TEST(DeviceWatchdog, AStalledPeerIsADeadlineNamingTheRanksThatNeverArrived) {
  Guarded g(
      [](uint64_t sequence) { return sequence == 7 ? std::vector<int>{1} : std::vector<int>{}; });
  g.all_reduce(7);
  EXPECT_FALSE(g.watchdog->check(g.t0 + seconds(29)));
  EXPECT_TRUE(g.watchdog->check(g.t0 + seconds(30)));
  EXPECT_EQ(g.control->aborts, 1);
  const std::string message = recorded<DeadlineExceeded>(*g.watchdog);
  EXPECT_NE(message.find("all_reduce of 4 MiB float32 (collective 7) on process 0 on host a did "
                         "not finish within 30.0 s: rank(s) 1 never arrived"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("communicator was aborted"), std::string::npos) << message;
  EXPECT_THROW(g.watchdog->communicator(), DeadlineExceeded);
  EXPECT_FALSE(g.watchdog->check(g.t0 + seconds(60)));  // trips once
  EXPECT_EQ(g.control->aborts, 1);
}

TEST(DeviceWatchdog, AnAsynchronousErrorTripsAtOnceAsThePeersFailureOrTheLibrarys) {
  for (bool peer_lost : {true, false}) {
    Guarded g;
    g.all_reduce(1);
    g.control->fail("remote process exited or there was a network error", peer_lost);
    EXPECT_TRUE(g.watchdog->check(g.t0 + seconds(1)));
    EXPECT_EQ(g.control->aborts, 1);
    const std::string message =
        peer_lost ? recorded<PeerFailure>(*g.watchdog) : recorded<Error>(*g.watchdog);
    if (!peer_lost) {
      try {
        g.watchdog->rethrow();
      } catch (const PeerFailure& e) {
        ADD_FAILURE() << "the library's own error was reported as a peer's: " << e.what();
      } catch (const Error&) {
      }
    }
    EXPECT_NE(message.find("the device communicator of process 0 on host a failed while waiting "
                           "in all_reduce of 4 MiB float32: remote process exited"),
              std::string::npos)
        << message;
  }
}

TEST(DeviceWatchdog, APeerReportedDeadTripsBeforeTheDeadline) {
  Guarded g;
  g.all_reduce(3);
  g.watchdog->peer_failed(1, "process 1 on host b", "in all_reduce (collective 3)");
  EXPECT_TRUE(g.watchdog->check(g.t0 + seconds(1)));
  const std::string message = recorded<PeerFailure>(*g.watchdog);
  EXPECT_NE(message.find("rank 1 (process 1 on host b) died while in all_reduce (collective 3); "
                         "process 0 on host a was waiting in all_reduce of 4 MiB float32"),
            std::string::npos)
      << message;
  EXPECT_EQ(g.control->aborts, 1);
}

// Creation waits for every rank to join: registered as a collective, a rank that never joins is
// a deadline like any other.
TEST(DeviceWatchdog, ACreationNobodyCompletesIsADeadline) {
  auto control = std::make_shared<FakeDeviceCommunicator::Control>();
  auto comm = std::make_unique<FakeDeviceCommunicator>(control, 0, 2);
  FakeDeviceCommunicator* fake = comm.get();
  DeviceWatchdog watchdog(std::move(comm), seconds(30), "process 0 on host a",
                          [](uint64_t) { return std::vector<int>{1}; });
  const auto t0 = Clock::now();
  watchdog.queued(
      0, "creation of the communicator",
      [fake] { return fake->poll().state != DeviceCommState::kInProgress; }, t0);
  EXPECT_FALSE(watchdog.check(t0 + seconds(10)));
  EXPECT_TRUE(watchdog.check(t0 + seconds(31)));
  EXPECT_NE(
      recorded<DeadlineExceeded>(watchdog).find("creation of the communicator (collective 0)"),
      std::string::npos);
}

TEST(DeviceWatchdog, ARebuiltCommunicatorRunsCollectivesAgain) {
  Guarded g;
  g.all_reduce(1);
  ASSERT_TRUE(g.watchdog->check(g.t0 + seconds(31)));
  auto fresh_control = std::make_shared<FakeDeviceCommunicator::Control>();
  fresh_control->join();
  auto fresh = std::make_unique<FakeDeviceCommunicator>(fresh_control, 0, 2);
  FakeDeviceCommunicator* fake = fresh.get();
  g.watchdog->rebuild(std::move(fresh));
  EXPECT_FALSE(g.watchdog->tripped());
  EXPECT_NO_THROW(g.watchdog->communicator().all_reduce(nullptr, nullptr, 1, DType::kFloat32,
                                                        ReduceOp::kSum, nullptr));
  g.watchdog->queued(2, "all_reduce", fake->last_done(), g.t0 + seconds(40));
  fresh_control->finish(0);
  EXPECT_FALSE(g.watchdog->check(g.t0 + seconds(80)));
  EXPECT_EQ(fresh_control->aborts, 0);
}

// The watchdog's own thread, on the steady clock: a stalled collective with a 200 ms deadline is
// an error well within 5 s past it, and the caller blocked on it can see it.
TEST(DeviceWatchdog, ItsThreadTripsWithinFiveSecondsOfTheDeadline) {
  auto control = std::make_shared<FakeDeviceCommunicator::Control>();
  control->join();
  auto comm = std::make_unique<FakeDeviceCommunicator>(control, 0, 2);
  FakeDeviceCommunicator* fake = comm.get();
  DeviceWatchdog watchdog(std::move(comm), std::chrono::milliseconds(200), "process 0 on host a");
  watchdog.start(std::chrono::milliseconds(5));
  const auto start = Clock::now();
  watchdog.communicator().all_reduce(nullptr, nullptr, 1, DType::kFloat32, ReduceOp::kSum, nullptr);
  watchdog.queued(1, "all_reduce", fake->last_done(), start);
  const auto probe = fake->last_done();
  while (!probe() && Clock::now() - start < seconds(10)) {  // the caller's wait on its stream
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  const double waited = std::chrono::duration<double>(Clock::now() - start).count();
  EXPECT_TRUE(watchdog.tripped());
  EXPECT_GE(waited, 0.2);
  EXPECT_LT(waited, 5.2);
  EXPECT_THROW(watchdog.communicator(), DeadlineExceeded);
}

}  // namespace
}  // namespace spmd::test
