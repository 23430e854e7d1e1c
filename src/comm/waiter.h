// How the data plane waits: spin, then yield, then sleep, checking the process's abort flag on
// every idle turn and the call's deadline every few. Nothing in src/comm/ waits any other way.
//
// Spinning first keeps small collectives near the hardware's latency; yielding lets oversubscribed
// processes (more processes than cores) make progress; sleeping bounds the CPU a process burns
// while a slow peer computes. One Waiter serves one call on one thread.
#pragma once

#include <chrono>
#include <optional>
#include <span>

namespace spmd {

class CoordClient;

class Waiter {
 public:
  using Clock = std::chrono::steady_clock;

  // `coord` (may be null: the process runs alone) supplies the abort flag; `deadline` is the
  // call's, from the collective timeout, or none.
  Waiter(const CoordClient* coord, std::optional<Clock::time_point> deadline);
  // The same with the deadline `timeout` after the wait first goes idle past spinning: a call
  // that never waits that long reads no clock for it (deadlines are on by default, and an
  // 8-byte collective takes a fraction of a microsecond).
  static Waiter with_timeout(const CoordClient* coord,
                             std::optional<std::chrono::nanoseconds> timeout);

  // Call after a turn of the loop made progress.
  void progressed() { idle_turns_ = 0; }

  // Call after a turn made none. Throws PeerFailure when the cluster was aborted; returns true
  // when the deadline has passed (the caller throws DeadlineExceeded, knowing who is missing).
  // `fds` (sockets) are polled for readability once the wait turns into sleeping.
  bool idle(std::span<const int> fds = {});

  // Throws PeerFailure when the cluster was aborted.
  void check_abort() const;

  // Waits up to `grace` for the cluster to be aborted, throwing PeerFailure when it is; returns
  // otherwise.
  void await_abort(std::chrono::milliseconds grace) const;

  std::optional<Clock::time_point> deadline() const { return deadline_; }
  // Whether the wait has gone on long enough to sleep between checks (about 20 ms idle): the
  // point from which it is shown in the live view. idle_since() is when it went idle.
  bool sleeping() const { return sleeping_; }
  Clock::time_point idle_since() const { return idle_since_; }
  // The coordination client (null when the process runs alone), for what else a wait may check.
  const CoordClient* coord() const { return coord_; }

 private:
  const CoordClient* coord_;
  std::optional<Clock::time_point> deadline_;
  std::optional<std::chrono::nanoseconds> timeout_;  // sets deadline_ at the first idle turn
  uint64_t idle_turns_ = 0;
  Clock::time_point idle_since_;
  bool sleeping_ = false;
};

}  // namespace spmd
