// How far the host runs ahead of a GPU (kernels/cuda/calls_in_flight.h), on the CPU: which
// queued calls are waited for, in which order, and what SPMD_GPU_CALLS_IN_FLIGHT may say.
#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "kernels/cuda/calls_in_flight.h"
#include "spmd/error.h"

namespace spmd::kernels::cuda {
namespace {

// Call `k`'s wait, which records that it ran.
CallsInFlight::Wait recorder(std::vector<int>& waited, int k) {
  return [&waited, k] { waited.push_back(k); };
}

TEST(CallsInFlight, ReturnAtOnceWithinTheBoundThenWaitForTheOldestBeyondIt) {
  CallsInFlight calls(3);
  std::vector<int> waited;
  for (int k = 0; k < 3; ++k) calls.queued(recorder(waited, k));
  EXPECT_TRUE(waited.empty()) << "three calls fit a bound of three: none was waited for";
  EXPECT_EQ(calls.pending(), 3u);
  calls.queued(recorder(waited, 3));
  EXPECT_EQ(waited, std::vector<int>{0}) << "the fourth call waits for the first, no other";
  for (int k = 4; k < 8; ++k) calls.queued(recorder(waited, k));
  EXPECT_EQ(waited, (std::vector<int>{0, 1, 2, 3, 4})) << "oldest first, one per call";
  EXPECT_EQ(calls.pending(), 3u);
}

TEST(CallsInFlight, ABoundOfZeroWaitsForEachCallItself) {
  CallsInFlight calls(0);
  std::vector<int> waited;
  calls.queued(recorder(waited, 0));
  EXPECT_EQ(waited, std::vector<int>{0});
  calls.queued(recorder(waited, 1));
  EXPECT_EQ(waited, (std::vector<int>{0, 1}));
  EXPECT_EQ(calls.pending(), 0u);
}

TEST(CallsInFlight, ClearForgetsTheCallsASynchronizeWaitedFor) {
  CallsInFlight calls(2);
  std::vector<int> waited;
  calls.queued(recorder(waited, 0));
  calls.queued(recorder(waited, 1));
  calls.clear();
  EXPECT_EQ(calls.pending(), 0u);
  calls.queued(recorder(waited, 2));
  calls.queued(recorder(waited, 3));
  EXPECT_TRUE(waited.empty()) << "the cleared calls are not waited for again";
  calls.queued(recorder(waited, 4));
  EXPECT_EQ(waited, std::vector<int>{2});
}

TEST(CallsInFlight, AFaultOfAnOlderCallIsThrownByTheCallThatWaitsForIt) {
  CallsInFlight calls(1);
  std::vector<int> waited;
  calls.queued([] { throw std::runtime_error("an illegal address on GPU 0"); });
  try {
    calls.queued(recorder(waited, 1));
    FAIL() << "the second call waited for the faulted first without its error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("illegal address"), std::string::npos) << e.what();
  }
  EXPECT_EQ(calls.pending(), 1u) << "the call that met the error is still queued";
  calls.queued(recorder(waited, 2));
  EXPECT_EQ(waited, std::vector<int>{1}) << "and is waited for next, once";
}

TEST(CallsInFlight, ThreadsQueuingAtOnceWaitForEveryCallBeyondTheBoundOnce) {
  constexpr int kThreads = 4, kCalls = 500, kBound = 5;
  CallsInFlight calls(kBound);
  std::atomic<int> waits{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int k = 0; k < kCalls; ++k) calls.queued([&waits] { waits.fetch_add(1); });
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(calls.pending(), static_cast<size_t>(kBound));
  EXPECT_EQ(waits.load(), kThreads * kCalls - kBound);
}

TEST(CallsInFlight, TheBoundComesFromTheEnvironmentOrIsXlas) {
  EXPECT_EQ(calls_in_flight_from(nullptr), kDefaultCallsInFlight);
  EXPECT_EQ(calls_in_flight_from(""), kDefaultCallsInFlight);
  EXPECT_EQ(kDefaultCallsInFlight, 32) << "XLA's GPU client queues 32 executions ahead";
  EXPECT_EQ(calls_in_flight_from("0"), 0);
  EXPECT_EQ(calls_in_flight_from("7"), 7);
  EXPECT_EQ(calls_in_flight_from("1024"), 1024);
  for (const char* bad : {"-1", "1025", "4 ", "two", "0x10", "99999999999"}) {
    try {
      calls_in_flight_from(bad);
      ADD_FAILURE() << bad << " was taken";
    } catch (const InvalidArgument& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("SPMD_GPU_CALLS_IN_FLIGHT"), std::string::npos) << what;
      EXPECT_NE(what.find(bad), std::string::npos) << what;
    }
  }
  EXPECT_THROW(CallsInFlight(-1), InvalidArgument);
  EXPECT_THROW(CallsInFlight(kMostCallsInFlight + 1), InvalidArgument);
}

}  // namespace
}  // namespace spmd::kernels::cuda
