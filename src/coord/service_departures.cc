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
//   nests (and FramedConnection never runs a close handler inside cx_.send()).
#include "coord/service_departures.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>

#include "coord/process_set.h"
#include "coord/wire.h"

namespace spmd {

using SessionPtr = ServiceContext::SessionPtr;

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

Departures::Departures(ServiceContext& cx, LiveView& view, BarrierTable& barriers)
    : cx_(cx), view_(view), barriers_(barriers), heartbeat_timer_(cx.io), leaver_timer_(cx.io) {}

void Departures::stop() {
  log_death_summary();
  cx_.refusals.flush(Clock::time_point::max());
  heartbeat_timer_.cancel();
  leaver_timer_.cancel();
}

void Departures::schedule_heartbeat_check() {
  const auto interval =
      std::clamp(cx_.opts.heartbeat_timeout / 4, milliseconds(20), milliseconds(5000));
  heartbeat_timer_.expires_after(interval);
  heartbeat_timer_.async_wait([this](asio::error_code ec) {
    if (ec) return;
    check_heartbeats();
    log_death_summary();
    cx_.refusals.flush(Clock::now());
    if (!cx_.members.finished()) schedule_heartbeat_check();
  });
}

// O(N) per tick: one pass over the processes, a few ticks per heartbeat timeout.
void Departures::check_heartbeats() {
  const auto now = Clock::now();
  for (int p = 0; p < cx_.opts.num_processes; ++p) {
    if (!cx_.members.active(p) || now - cx_.links[p].last_heard <= cx_.opts.heartbeat_timeout)
      continue;
    declare_dead(p, fmt::format("no heartbeat for {} ms (the process hangs, is stopped, or its "
                                "host is unreachable)",
                                cx_.opts.heartbeat_timeout.count()));
  }
}

void Departures::declare_dead(int process, std::string reason) {
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
void Departures::handle_death(int p, const std::string& reason) {
  const bool first = !cx_.members.first_dead();
  if (!cx_.members.mark_dead(p)) return;
  view_.board().dead(p, reason);
  ++cx_.deaths;
  log_death(p, reason);
  if (first) tell_everyone_of_failure(p, reason);
  barriers_.fail_process(p, StatusCode::kPeerFailure,
                         cx_.members.describe(p) + " failed: " + reason);
  const auto& session = cx_.links[p].session;
  if (session && session->process_id == p) session->conn->close("declared dead");
  complete_shutdown_if_ready();
  update_finished();
}

void Departures::log_death(int p, const std::string& reason) {
  if (cx_.deaths == 1) {
    spdlog::error("coordination service: {} failed: {}", cx_.members.describe(p), reason);
  } else if (deaths_logged_ < kDeathsLoggedSingly) {
    // Most likely it stopped because it heard of the first failure.
    ++deaths_logged_;
    spdlog::info("coordination service: {} is gone too: {}", cx_.members.describe(p), reason);
  } else {
    ++deaths_unlogged_;
    last_unlogged_death_ = cx_.members.describe(p) + ": " + reason;
  }
}

void Departures::log_death_summary() {
  if (deaths_unlogged_ == 0) return;
  spdlog::info("coordination service: {} more processes are gone (the last: {}); {} of {} dead",
               deaths_unlogged_, last_unlogged_death_, cx_.deaths.load(), cx_.opts.num_processes);
  deaths_unlogged_ = 0;
}

// O(N), once per cluster: every process still connected hears of the first failure. One frame
// serves them all.
void Departures::tell_everyone_of_failure(int p, const std::string& reason) {
  wire::ServerMessage notice;
  auto* pf = notice.mutable_peer_failed();
  pf->set_process_id(p);
  pf->set_hostname(cx_.members.info(p).hostname);
  pf->set_pid(cx_.members.info(p).pid);
  pf->set_reason(reason);
  auto frame = std::make_shared<const std::string>(encode_message_frame(notice));
  for (int q = 0; q < cx_.opts.num_processes; ++q) {
    if (cx_.members.active(q) && cx_.links[q].session) cx_.links[q].session->conn->send(frame);
  }
}

void Departures::on_shutdown(const SessionPtr& session, uint64_t request_id,
                             const wire::ShutdownRequest& req) {
  ++cx_.shutdown_arrivals;
  const int p = session->process_id;
  if (!cx_.members.begin_leaving(p)) {
    return cx_.reply(*session, request_id,
                     {StatusCode::kFailedPrecondition, "this process is already shutting down"});
  }
  shutdown_waiters_[p] = request_id;
  // Pending barriers that need it fail now; later ones fail on arrival (barrier_blocked).
  barriers_.fail_process(p, StatusCode::kPeerFailure,
                         cx_.members.describe(p) + " called shutdown() and will not arrive");
  unannounced_leavers_.push_back(p);
  schedule_leaver_announcement();
  const milliseconds timeout = clamp_client_timeout(req.timeout_ms());
  auto timer = std::make_shared<asio::steady_timer>(cx_.io, timeout);
  timer->async_wait([this, timer, p, timeout](asio::error_code ec) {
    if (ec || shutdown_waiters_.count(p) == 0) return;
    std::vector<int> running;
    for (int i = 0; i < cx_.opts.num_processes; ++i) {
      if (cx_.members.state(i) == MemberState::kLive) running.push_back(i);
    }
    release_shutdown_waiters(
        {StatusCode::kDeadlineExceeded,
         fmt::format("the shutdown barrier timed out after {} ms: processes {} never called "
                     "shutdown(); this process left without them",
                     timeout.count(), format_process_list(running))});
  });
  complete_shutdown_if_ready();
}

void Departures::schedule_leaver_announcement() {
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
void Departures::announce_leavers() {
  std::vector<int> leavers = std::move(unannounced_leavers_);
  unannounced_leavers_.clear();
  if (leavers.empty() || cx_.members.live_count() == 0) return;
  std::sort(leavers.begin(), leavers.end());
  wire::ServerMessage notice;
  *notice.mutable_peer_leaving()->mutable_processes() = encode_process_set(leavers);
  auto frame = std::make_shared<const std::string>(encode_message_frame(notice));
  for (int q = 0; q < cx_.opts.num_processes; ++q) {
    if (cx_.members.state(q) == MemberState::kLive && cx_.links[q].session) {
      cx_.links[q].session->conn->send(frame);
    }
  }
}

void Departures::complete_shutdown_if_ready() {
  if (!shutdown_waiters_.empty() && cx_.members.live_count() == 0) release_shutdown_waiters({});
}

// O(waiters): each leaving process gets its answer.
void Departures::release_shutdown_waiters(const Status& status) {
  auto waiters = std::move(shutdown_waiters_);
  shutdown_waiters_.clear();
  for (auto& [p, request_id] : waiters) {
    if (!cx_.members.finish_leaving(p)) continue;
    if (cx_.links[p].session) cx_.reply(*cx_.links[p].session, request_id, status);
  }
  update_finished();
}

void Departures::update_finished() {
  if (!cx_.members.finished()) return;
  log_death_summary();
  cx_.mark_finished();
}

}  // namespace spmd
