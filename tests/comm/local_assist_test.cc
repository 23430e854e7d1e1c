// LocalAssist (comm/local_assist.h): every part runs exactly once whether or not helpers join,
// helpers that join take parts, a part's exception reaches the runner after every part is done,
// and a helper with nothing posted returns at once.
#include "comm/local_assist.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

namespace {

using spmd::LocalAssist;

TEST(LocalAssist, AloneTheRunnerRunsEveryPartOnce) {
  int woken = 0;
  LocalAssist assist([&] { ++woken; });
  std::vector<int> ran(9, 0);
  auto part = [&](int i) { ++ran[static_cast<size_t>(i)]; };
  assist.run(9, part);
  for (int r : ran) EXPECT_EQ(r, 1);
  EXPECT_EQ(woken, 1);
  EXPECT_FALSE(assist.has_work());
  assist.help();  // nothing posted: returns at once
}

// Three waiters poll as the rendezvous's waiters do; parts take long enough for them to join.
TEST(LocalAssist, WaitersTakePartsAndEachRunsOnce) {
  std::mutex mu;
  std::condition_variable cv;
  LocalAssist assist([&] {
    std::lock_guard lock(mu);
    cv.notify_all();
  });
  std::atomic<bool> stop = false;
  std::vector<std::thread> waiters;
  for (int w = 0; w < 3; ++w) {
    waiters.emplace_back([&] {
      std::unique_lock lock(mu);
      while (!stop) {
        if (assist.has_work()) {
          lock.unlock();
          assist.help();
          lock.lock();
          continue;
        }
        cv.wait_for(lock, std::chrono::milliseconds(20));
      }
    });
  }
  int helped = 0;  // parts run by a waiter, over every round
  for (int round = 0; round < 50; ++round) {
    std::vector<std::atomic<int>> ran(16);
    std::mutex threads_mu;
    std::vector<std::thread::id> threads;
    auto part = [&](int i) {
      ++ran[static_cast<size_t>(i)];
      std::this_thread::sleep_for(std::chrono::microseconds(200));
      std::lock_guard lock(threads_mu);
      threads.push_back(std::this_thread::get_id());
    };
    assist.run(16, part);
    for (const auto& r : ran) ASSERT_EQ(r.load(), 1) << "round " << round;
    ASSERT_EQ(threads.size(), 16u);
    for (const std::thread::id& id : threads) helped += id != std::this_thread::get_id() ? 1 : 0;
  }
  // 16 parts of 200 us a round: a waiter woken by the post joins within the round (a waiter
  // that never helped in 50 rounds would mean the post does not wake them).
  EXPECT_GT(helped, 0);
  stop = true;
  {
    std::lock_guard lock(mu);
    cv.notify_all();
  }
  for (std::thread& t : waiters) t.join();
}

TEST(LocalAssist, APartsExceptionReachesTheRunnerAfterEveryPartIsDone) {
  LocalAssist assist([] {});
  std::atomic<int> ran = 0;
  auto part = [&](int i) {
    ++ran;
    if (i == 2) throw std::runtime_error("part 2 failed");
  };
  try {
    assist.run(6, part);
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "part 2 failed");
  }
  EXPECT_EQ(ran.load(), 6);
  EXPECT_FALSE(assist.has_work());
}

}  // namespace
