// What this process is doing, for the live view (status_board.h): the waits on other processes
// in progress, and the last collective call it finished.
//
// Cost on the fast path: a finished call is three plain stores (note_finished); a wait is
// reported only once it has lasted past the waiter's spinning phase (about 20 ms), so a call
// that completes sooner never takes the lock. Thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "coord/wire.h"

namespace spmd {

class ActivityTracker {
 public:
  using Clock = std::chrono::steady_clock;

  // A wait that has lasted long enough to show: in `call` ("all_reduce #881 (sum, float32 x
  // 64)"), since `since`, for `waiting_for` (process ids that have not arrived). Returns the
  // token for end_wait().
  uint64_t begin_wait(std::string call, std::vector<int> waiting_for, Clock::time_point since);
  void end_wait(uint64_t token);

  // Whether a call finished since the last snapshot(), which then has news.
  bool finished_since_snapshot();

  // Every collective call that completes. `op` must be a string with static storage.
  void note_finished(const char* op, uint64_t sequence) noexcept {
    last_op_.store(op, std::memory_order_relaxed);
    last_sequence_.store(sequence, std::memory_order_relaxed);
    // Not an atomic increment (a locked instruction on every call): two threads finishing at
    // once may count one; the count only has to change.
    finished_count_.store(finished_count_.load(std::memory_order_relaxed) + 1,
                          std::memory_order_relaxed);
  }

  // Now: the oldest wait in progress, else the last finished call and how long ago. "How long
  // ago" counts from the first snapshot that saw the call finished, so it understates by at most
  // the interval between snapshots (a heartbeat's, or a wait's beginning or end).
  wire::Activity snapshot(Clock::time_point now);

  // Runs (outside the lock) when a wait begins or ends, so the client sends the change at once.
  void on_change(std::function<void()> notify);

 private:
  struct Wait {
    std::string call;
    std::vector<int> waiting_for;
    Clock::time_point since;
  };
  void changed();

  std::mutex mu_;
  std::map<uint64_t, Wait> waits_;
  uint64_t next_token_ = 1;
  std::function<void()> notify_;
  // Finished calls: written without the lock by every call.
  std::atomic<const char*> last_op_{nullptr};
  std::atomic<uint64_t> last_sequence_{0};
  std::atomic<uint64_t> finished_count_{0};
  // snapshot()'s memory (under mu_): the count it last saw and when it first saw it change.
  uint64_t seen_count_ = 0;
  Clock::time_point seen_at_;
};

}  // namespace spmd
