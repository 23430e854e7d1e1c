#include "coord/activity.h"

#include <fmt/format.h>

namespace spmd {

uint64_t ActivityTracker::begin_wait(std::string call, std::vector<int> waiting_for,
                                     Clock::time_point since) {
  uint64_t token = 0;
  {
    std::lock_guard lock(mu_);
    token = next_token_++;
    waits_.emplace(token, Wait{std::move(call), std::move(waiting_for), since});
  }
  changed();
  return token;
}

void ActivityTracker::end_wait(uint64_t token) {
  {
    std::lock_guard lock(mu_);
    waits_.erase(token);
  }
  changed();
}

bool ActivityTracker::finished_since_snapshot() {
  std::lock_guard lock(mu_);
  return finished_count_.load(std::memory_order_relaxed) != seen_count_;
}

void ActivityTracker::on_change(std::function<void()> notify) {
  std::lock_guard lock(mu_);
  notify_ = std::move(notify);
}

void ActivityTracker::changed() {
  std::function<void()> notify;
  {
    std::lock_guard lock(mu_);
    notify = notify_;
  }
  if (notify) notify();
}

wire::Activity ActivityTracker::snapshot(Clock::time_point now) {
  wire::Activity a;
  std::lock_guard lock(mu_);
  const auto ms = [now](Clock::time_point t) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(now - t).count();
  };
  if (!waits_.empty()) {
    const Wait* oldest = &waits_.begin()->second;
    for (const auto& [token, w] : waits_) {
      if (w.since < oldest->since) oldest = &w;
    }
    a.set_blocked(true);
    a.set_call(oldest->call);
    a.set_for_ms(ms(oldest->since));
    for (int p : oldest->waiting_for) a.add_waiting_for(p);
    return a;
  }
  const uint64_t count = finished_count_.load(std::memory_order_relaxed);
  if (count != seen_count_) {
    seen_count_ = count;
    seen_at_ = now;
  }
  const char* op = last_op_.load(std::memory_order_relaxed);
  if (op == nullptr) {
    a.set_for_ms(-1);
    return a;
  }
  a.set_call(fmt::format("{} #{}", op, last_sequence_.load(std::memory_order_relaxed)));
  a.set_for_ms(ms(seen_at_));
  return a;
}

}  // namespace spmd
