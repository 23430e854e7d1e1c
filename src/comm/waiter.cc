#include "comm/waiter.h"

#include <fmt/format.h>
#include <poll.h>
#include <sched.h>

#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "coord/coord_client.h"
#include "spmd/error.h"

namespace spmd {
namespace {

// Idle turns spent spinning before yielding: a microsecond or two, the span in which a peer on
// another core typically answers a small message. Short, because a peer that shares this core
// cannot answer until this process yields (measured: 25 µs per small all-reduce at 256 turns,
// 10 µs at 64, when two processes landed on one core).
constexpr uint64_t kSpinTurns = 64;
// Idle time after which the wait sleeps between checks: a peer this late is computing, and the
// latency added by sleeping (below) is small beside it.
constexpr auto kSleepAfter = std::chrono::milliseconds(20);
constexpr auto kSleepFor = std::chrono::microseconds(200);
// Deadline checks read the clock; doing it every few idle turns keeps spinning cheap.
constexpr uint64_t kDeadlineCheckEvery = 64;

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

}  // namespace

Waiter::Waiter(const CoordClient* coord, std::optional<Clock::time_point> deadline)
    : coord_(coord), deadline_(deadline) {}

Waiter Waiter::with_timeout(const CoordClient* coord,
                            std::optional<std::chrono::nanoseconds> timeout) {
  Waiter w(coord, std::nullopt);
  w.timeout_ = timeout;
  return w;
}

void Waiter::check_abort() const {
  if (coord_ != nullptr && coord_->aborted()) throw PeerFailure(coord_->abort_reason());
}

void Waiter::await_abort(std::chrono::milliseconds grace) const {
  if (coord_ == nullptr) return;
  const auto until = Clock::now() + grace;
  while (Clock::now() < until) {
    check_abort();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  check_abort();
}

bool Waiter::idle(std::span<const int> fds) {
  check_abort();
  const uint64_t turn = idle_turns_++;
  if (turn < kSpinTurns) {
    cpu_relax();
    return false;
  }
  if (turn == kSpinTurns) {
    idle_since_ = Clock::now();
    sleeping_ = false;
    if (timeout_ && !deadline_) deadline_ = idle_since_ + *timeout_;
  }
  if (sleeping_ || (turn - kSpinTurns) % kDeadlineCheckEvery == 0) {
    const Clock::time_point now = Clock::now();
    if (deadline_ && now >= *deadline_) return true;
    sleeping_ = now - idle_since_ > kSleepAfter;
  }
  if (!sleeping_) {
    sched_yield();
  } else if (!fds.empty()) {
    std::vector<pollfd> p;
    p.reserve(fds.size());
    for (int fd : fds) p.push_back({fd, POLLIN, 0});
    ::poll(p.data(), p.size(), 1);
  } else {
    std::this_thread::sleep_for(kSleepFor);
  }
  return false;
}

}  // namespace spmd
