// How processes leave the cluster: dying (a dropped connection, missed heartbeats) or calling
// shutdown(), and the shutdown barrier that lets them go together.
//
// Both are built to stay linear when thousands of processes leave at once — a job-wide kill, a
// rack's switch failing, or simply the end of a large job:
// - A failure is broadcast once. A process told of a failure aborts, and every later call of
//   it fails anyway, so the second and later deaths are only logged (a few lines, then a
//   count), never sent to N processes each.
// - Processes calling shutdown() are announced in batches, after a quiet spell: at the end of a
//   job everyone arrives within the spell and nobody is told anything; a process that leaves
//   early while others still run is announced a fraction of a second later.
// - Deaths are queued and handled one at a time, so a death found while handling another never
//   nests (and FramedConnection never runs a close handler inside send()).
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>

#include "coord/process_set.h"
#include "coord/service_impl.h"
#include "coord/wire.h"

namespace spmd {

namespace {

// Leavers are announced once no other process has called shutdown() for kLeaverQuiet, and at
// the latest kLeaverMaxDelay after the first unannounced one. A client gives a leaver another
// second (comm's kLeavingGrace) for its last messages, so the announcement's delay only adds to
// the time a mistaken early exit takes to be reported; it never makes a correct program fail.
constexpr std::chrono::milliseconds kLeaverQuiet{100};
constexpr std::chrono::milliseconds kLeaverMaxDelay{1000};

// After the first failure, this many more deaths get a log line of their own; the rest are
// counted and summarised at the next heartbeat check (a mass failure logs a few lines, not N).
constexpr int kDeathsLoggedSingly = 8;

}  // namespace

void CoordService::Impl::schedule_heartbeat_check() {
  const auto interval =
      std::clamp(opts_.heartbeat_timeout / 4, milliseconds(20), milliseconds(5000));
  heartbeat_timer_.expires_after(interval);
  heartbeat_timer_.async_wait([this](asio::error_code ec) {
    if (ec) return;
    check_heartbeats();
    log_death_summary();
    if (!members_.finished()) schedule_heartbeat_check();
  });
}

// O(N) per tick: one pass over the processes, a few ticks per heartbeat timeout.
void CoordService::Impl::check_heartbeats() {
  const auto now = Clock::now();
  for (int p = 0; p < opts_.num_processes; ++p) {
    if (!members_.active(p) || now - links_[p].last_heard <= opts_.heartbeat_timeout) continue;
    declare_dead(p, fmt::format("no heartbeat for {} ms (the process hangs, is stopped, or its "
                                "host is unreachable)",
                                opts_.heartbeat_timeout.count()));
  }
}

void CoordService::Impl::declare_dead(int process, std::string reason) {
  pending_deaths_.emplace_back(process, std::move(reason));
  if (handling_deaths_) return;  // the loop below, further up this stack, takes it
  handling_deaths_ = true;
  while (!pending_deaths_.empty()) {
    auto [p, why] = std::move(pending_deaths_.front());
    pending_deaths_.pop_front();
    handle_death(p, why);
  }
  handling_deaths_ = false;
}

// O(1), plus O(N) for the first failure's broadcast and O(pending barriers).
void CoordService::Impl::handle_death(int p, const std::string& reason) {
  const bool first = !members_.first_dead();
  if (!members_.mark_dead(p)) return;
  board_.dead(p, reason);
  ++deaths_;
  log_death(p, reason);
  if (first) tell_everyone_of_failure(p, reason);
  barriers_.fail_process(p, StatusCode::kPeerFailure, members_.describe(p) + " failed: " + reason);
  const auto& session = links_[p].session;
  if (session && session->process_id == p) session->conn->close("declared dead");
  complete_shutdown_if_ready();
  update_finished();
}

void CoordService::Impl::log_death(int p, const std::string& reason) {
  if (deaths_ == 1) {
    spdlog::error("coordination service: {} failed: {}", members_.describe(p), reason);
  } else if (deaths_logged_ < kDeathsLoggedSingly) {
    // Most likely it stopped because it heard of the first failure.
    ++deaths_logged_;
    spdlog::info("coordination service: {} is gone too: {}", members_.describe(p), reason);
  } else {
    ++deaths_unlogged_;
    last_unlogged_death_ = members_.describe(p) + ": " + reason;
  }
}

void CoordService::Impl::log_death_summary() {
  if (deaths_unlogged_ == 0) return;
  spdlog::info("coordination service: {} more processes are gone (the last: {}); {} of {} dead",
               deaths_unlogged_, last_unlogged_death_, deaths_.load(), opts_.num_processes);
  deaths_unlogged_ = 0;
}

// O(N), once per cluster: every process still connected hears of the first failure. One frame
// serves them all.
void CoordService::Impl::tell_everyone_of_failure(int p, const std::string& reason) {
  wire::ServerMessage notice;
  auto* pf = notice.mutable_peer_failed();
  pf->set_process_id(p);
  pf->set_hostname(members_.info(p).hostname);
  pf->set_pid(members_.info(p).pid);
  pf->set_reason(reason);
  auto frame = std::make_shared<const std::string>(encode_message_frame(notice));
  for (int q = 0; q < opts_.num_processes; ++q) {
    if (members_.active(q) && links_[q].session) links_[q].session->conn->send(frame);
  }
}

void CoordService::Impl::on_shutdown(const std::shared_ptr<Session>& session, uint64_t request_id,
                                     const wire::ShutdownRequest& req) {
  ++shutdown_arrivals_;
  const int p = session->process_id;
  if (!members_.begin_leaving(p)) {
    return reply(*session, request_id,
                 {StatusCode::kFailedPrecondition, "this process is already shutting down"});
  }
  shutdown_waiters_[p] = request_id;
  // Pending barriers that need it fail now; later ones fail on arrival (barrier_blocked).
  barriers_.fail_process(p, StatusCode::kPeerFailure,
                         members_.describe(p) + " called shutdown() and will not arrive");
  unannounced_leavers_.push_back(p);
  schedule_leaver_announcement();
  const milliseconds timeout = clamp_client_timeout(req.timeout_ms());
  auto timer = std::make_shared<asio::steady_timer>(io_, timeout);
  timer->async_wait([this, timer, p, timeout](asio::error_code ec) {
    if (ec || shutdown_waiters_.count(p) == 0) return;
    std::vector<int> running;
    for (int i = 0; i < opts_.num_processes; ++i) {
      if (members_.state(i) == MemberState::kLive) running.push_back(i);
    }
    release_shutdown_waiters(
        {StatusCode::kDeadlineExceeded,
         fmt::format("the shutdown barrier timed out after {} ms: processes {} never called "
                     "shutdown(); this process left without them",
                     timeout.count(), format_process_list(running))});
  });
  complete_shutdown_if_ready();
}

void CoordService::Impl::schedule_leaver_announcement() {
  const auto now = Clock::now();
  if (unannounced_leavers_.size() == 1) first_unannounced_ = now;
  leaver_timer_.expires_at(std::min(now + kLeaverQuiet, first_unannounced_ + kLeaverMaxDelay));
  leaver_timer_.async_wait([this](asio::error_code ec) {
    if (!ec) announce_leavers();
  });
}

// O(N + live x set bytes), at most once per kLeaverQuiet: one frame naming every leaver since
// the last announcement (a range or a bitmap, so at most N/8 bytes), sent to each process still
// running. Nobody is told when nobody runs any more.
void CoordService::Impl::announce_leavers() {
  std::vector<int> leavers = std::move(unannounced_leavers_);
  unannounced_leavers_.clear();
  if (leavers.empty() || members_.live_count() == 0) return;
  std::sort(leavers.begin(), leavers.end());
  wire::ServerMessage notice;
  *notice.mutable_peer_leaving()->mutable_processes() = encode_process_set(leavers);
  auto frame = std::make_shared<const std::string>(encode_message_frame(notice));
  for (int q = 0; q < opts_.num_processes; ++q) {
    if (members_.state(q) == MemberState::kLive && links_[q].session) {
      links_[q].session->conn->send(frame);
    }
  }
}

void CoordService::Impl::complete_shutdown_if_ready() {
  if (!shutdown_waiters_.empty() && members_.live_count() == 0) release_shutdown_waiters({});
}

// O(waiters): each leaving process gets its answer.
void CoordService::Impl::release_shutdown_waiters(const Status& status) {
  auto waiters = std::move(shutdown_waiters_);
  shutdown_waiters_.clear();
  for (auto& [p, request_id] : waiters) {
    if (!members_.finish_leaving(p)) continue;
    if (links_[p].session) reply(*links_[p].session, request_id, status);
  }
  update_finished();
}

void CoordService::Impl::update_finished() {
  if (!members_.finished()) return;
  log_death_summary();
  std::lock_guard lock(mu_);
  finished_ = true;
  cv_.notify_all();
}

}  // namespace spmd
