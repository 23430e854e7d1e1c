// Work that the runner of a local rendezvous shares with the participants waiting for it. In a
// process with several local participants the last to arrive runs each collective for all of
// them (local_rendezvous.h) while the others wait, each on a core of its own; an all-reduce
// among them alone is memory-bound work (a data-parallel MLP step's 25 MB of gradients on 1 x 2
// devices: 2.7 ms on one core, with the other idle). The runner cuts such work into parts and
// posts them here; the waiters, woken, take parts until none is left, and the runner, taking
// parts too, returns when every part is done. A waiter that wakes late finds nothing and goes
// back to waiting: the runner never waits for a helper to arrive, only for the parts taken.
//
// Parts must be independent and must not block (they compute on buffers). Thread-safe.
#pragma once

#include <atomic>
#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <utility>

#include "comm/function_ref.h"

namespace spmd {

class LocalAssist {
 public:
  // `wake` wakes the waiting participants (notifies what they wait on, under its lock).
  explicit LocalAssist(std::function<void()> wake) : wake_(std::move(wake)) {}

  // part(i) for every i in [0, parts), on the calling thread and on any waiter that helps;
  // returns when all are done, rethrowing the first exception a part threw.
  void run(int parts, FunctionRef<void(int)> part);

  // Whether work is posted: a waiter then calls help().
  bool has_work() const { return posted_.load(std::memory_order_acquire); }

  // Takes and runs parts of the posted work until none is left; returns at once if none is.
  void help();

 private:
  struct Job {
    FunctionRef<void(int)> part;
    int parts = 0;
    int next = 0;  // the next part to take
    int done = 0;  // parts finished
    std::exception_ptr error;
  };
  // Takes parts of `job` until none is left (under `lock`, released while a part runs).
  void work(Job& job, std::unique_lock<std::mutex>& lock);

  std::function<void()> wake_;
  std::mutex mu_;
  std::condition_variable finished_;
  Job* job_ = nullptr;  // under mu_: the posted job, on the runner's stack
  std::atomic<bool> posted_ = false;
};

}  // namespace spmd
