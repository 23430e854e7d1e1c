#include "comm/device_watchdog.h"

#include <fmt/format.h>

#include <algorithm>

#include "spmd/error.h"

namespace spmd {

DeviceWatchdog::DeviceWatchdog(std::unique_ptr<DeviceCommunicator> comm, Clock::duration deadline,
                               std::string who, MissingRanks missing)
    : comm_(std::move(comm)),
      deadline_(deadline),
      who_(std::move(who)),
      missing_(std::move(missing)) {}

DeviceWatchdog::~DeviceWatchdog() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  stop_signal_.notify_all();
  if (thread_.joinable()) thread_.join();
}

DeviceCommunicator& DeviceWatchdog::communicator() {
  std::lock_guard lock(mutex_);
  if (error_) std::rethrow_exception(error_);
  return *comm_;
}

void DeviceWatchdog::queued(uint64_t sequence, std::string what, std::function<bool()> done,
                            Clock::time_point now) {
  std::lock_guard lock(mutex_);
  pending_.push_back({sequence, std::move(what), std::move(done), now});
}

void DeviceWatchdog::peer_failed(int rank, std::string who, std::string doing) {
  std::lock_guard lock(mutex_);
  dead_.push_back({rank, std::move(who), std::move(doing)});
}

std::string DeviceWatchdog::deadline_message(const Pending& p, Clock::time_point now) const {
  const double waited = std::chrono::duration<double>(now - p.queued_at).count();
  const std::vector<int> missing = missing_ ? missing_(p.sequence) : std::vector<int>{};
  const std::string absent =
      missing.empty()
          ? std::string(
                "which ranks never arrived is not known (no process has been reported dead)")
          : fmt::format("rank(s) {} never arrived", fmt::join(missing, ", "));
  return fmt::format(
      "{} (collective {}) on {} did not finish within {:.1f} s: {}; its communicator was "
      "aborted. Find what those processes are doing (spmd-status), or raise the collective "
      "deadline if the wait is expected",
      p.what, p.sequence, who_, waited, absent);
}

std::exception_ptr DeviceWatchdog::first_failure(Clock::time_point now) {
  std::erase_if(pending_, [](const Pending& p) { return p.done(); });
  const std::string doing = pending_.empty() ? std::string("nothing queued")
                                             : fmt::format("waiting in {}", pending_.front().what);
  if (!dead_.empty()) {
    const DeadPeer& d = dead_.front();
    const std::string dead = d.rank < 0 ? d.who : fmt::format("rank {} ({})", d.rank, d.who);
    return std::make_exception_ptr(PeerFailure(fmt::format(
        "{} died while {}; {} was {}, and its communicator was aborted. Restart the job from its "
        "last checkpoint",
        dead, d.doing, who_, doing)));
  }
  const DeviceCommStatus status = comm_->poll();
  if (status.state == DeviceCommState::kFailed) {
    const std::string message =
        fmt::format("the device communicator of {} failed while {}: {}", who_, doing, status.error);
    return status.peer_lost ? std::make_exception_ptr(PeerFailure(message))
                            : std::make_exception_ptr(Error(message));
  }
  for (const Pending& p : pending_) {
    if (now - p.queued_at >= deadline_) {
      return std::make_exception_ptr(DeadlineExceeded(deadline_message(p, now)));
    }
  }
  return nullptr;
}

bool DeviceWatchdog::check(Clock::time_point now) {
  std::lock_guard lock(mutex_);
  if (error_) return false;
  std::exception_ptr failure = first_failure(now);
  if (!failure) return false;
  trip(std::move(failure));
  return true;
}

void DeviceWatchdog::trip(std::exception_ptr error) {
  error_ = std::move(error);
  comm_->abort();
  pending_.clear();  // aborted: the queued work ends, and the error speaks for all of it
}

void DeviceWatchdog::start(Clock::duration period) {
  std::lock_guard lock(mutex_);
  if (thread_.joinable()) return;
  thread_ = std::thread([this, period] {
    std::unique_lock lock(mutex_);
    while (!stop_signal_.wait_for(lock, period, [this] { return stopping_; })) {
      lock.unlock();
      check(Clock::now());
      lock.lock();
    }
  });
}

bool DeviceWatchdog::tripped() const {
  std::lock_guard lock(mutex_);
  return error_ != nullptr;
}

void DeviceWatchdog::rethrow() const {
  std::lock_guard lock(mutex_);
  if (!error_) throw FailedPrecondition("DeviceWatchdog::rethrow: the watchdog has not tripped");
  std::rethrow_exception(error_);
}

size_t DeviceWatchdog::pending() const {
  std::lock_guard lock(mutex_);
  return pending_.size();
}

void DeviceWatchdog::rebuild(std::unique_ptr<DeviceCommunicator> fresh) {
  std::lock_guard lock(mutex_);
  comm_ = std::move(fresh);
  pending_.clear();
  dead_.clear();
  error_ = nullptr;
}

}  // namespace spmd
