// Registration: checking a process's claim, holding it until every process has come, and forming
// the cluster with one topology for all.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <future>
#include <unordered_map>

#include "coord/service_impl.h"
#include "coord/topology_codec.h"
#include "coord/wire.h"

namespace spmd {

namespace {

// Bounds on what one registration may claim, so a hostile peer cannot make the topology huge.
constexpr int kMaxDevicesPerProcess = 1 << 16;
constexpr size_t kMaxHostIdBytes = 1024;

MemberInfo member_info(const wire::RegisterRequest& req) {
  MemberInfo info;
  info.host_id = req.host_id();
  info.hostname = req.hostname();
  info.pid = req.pid();
  info.devices.assign(req.devices().begin(), req.devices().end());
  return info;
}

}  // namespace

std::optional<Status> CoordService::Impl::check_registration(
    const wire::RegisterRequest& req) const {
  // Authentication comes first, so a wrong token learns nothing about the cluster.
  if (!tokens_equal(req.auth_token(), opts_.auth_token)) {
    return Status{StatusCode::kPermissionDenied,
                  "authentication failed: this process's auth token (Options::auth_token / "
                  "SPMD_AUTH_TOKEN) does not match the coordination service's"};
  }
  const int p = req.process_id();
  const int n = opts_.num_processes;
  if (req.num_processes() != n) {
    return Status{StatusCode::kInvalidArgument,
                  fmt::format("process {} was started with num_processes={}, but the "
                              "coordination service serves a cluster of {} processes; every "
                              "process must pass the same num_processes",
                              p, req.num_processes(), n)};
  }
  if (p < 0 || p >= n) {
    return Status{StatusCode::kInvalidArgument,
                  fmt::format("process_id {} is outside 0..{}", p, n - 1)};
  }
  if (req.devices_size() > kMaxDevicesPerProcess || req.host_id().size() > kMaxHostIdBytes ||
      req.hostname().size() > kMaxHostIdBytes) {
    return Status{StatusCode::kInvalidArgument,
                  "registration exceeds the limits on devices or names"};
  }
  if (members_.state(p) != MemberState::kEmpty) {
    return Status{StatusCode::kAlreadyExists,
                  fmt::format("process id {} is already taken by the process on host {} with "
                              "pid {}; every process needs its own id in 0..{}",
                              p, members_.info(p).hostname, members_.info(p).pid, n - 1)};
  }
  if (members_.formed()) {
    return Status{StatusCode::kFailedPrecondition, "the cluster has already formed"};
  }
  return std::nullopt;
}

void CoordService::Impl::on_register(const std::shared_ptr<Session>& session, uint64_t request_id,
                                     const wire::RegisterRequest& req) {
  if (request_id != kRegistrationRequestId) {
    drop(*session, "a registration that is not request 1");
    return;
  }
  if (const auto refusal = check_registration(req)) {
    spdlog::warn("coordination service: refused registration from {}: {}", session->conn->peer(),
                 refusal->message);
    reply(*session, request_id, *refusal);
    session->conn->close_after_writes("registration refused");
    return;
  }
  const int p = req.process_id();
  session->process_id = p;
  session->handshake_timer->cancel();
  session->conn->set_max_frame_bytes(kMaxFrameBytes);
  links_[p].session = session;
  {
    std::lock_guard lock(mu_);
    ++open_process_connections_;
  }
  const bool everyone = members_.register_pending(p, member_info(req));
  start_register_timer(p, session, clamp_client_timeout(req.timeout_ms()));
  if (everyone) form();
}

void CoordService::Impl::start_register_timer(int p, const std::shared_ptr<Session>& session,
                                              milliseconds timeout) {
  auto timer = std::make_shared<asio::steady_timer>(io_, timeout);
  links_[p].register_timer = timer;
  timer->async_wait([this, p, weak = std::weak_ptr(session), timeout](asio::error_code ec) {
    auto s = weak.lock();
    if (ec || !s || members_.formed() || links_[p].session != s) return;
    reply(*s, kRegistrationRequestId,
          {StatusCode::kDeadlineExceeded,
           fmt::format("only {} of {} processes registered with the coordination service within "
                       "{} ms; missing process ids: {}. Start every process with the same "
                       "coordinator_address and num_processes, or raise initialization_timeout",
                       members_.pending_count(), opts_.num_processes, timeout.count(),
                       format_process_list(members_.missing()))});
    release_pending(p);
  });
}

void CoordService::Impl::fail_registrations(const std::string& why) {
  // Shared with the handler: after the bounded wait below gives up, it may still run.
  auto queued = std::make_shared<std::promise<void>>();
  std::future<void> done = queued->get_future();
  asio::post(io_, [this, queued, why] {
    if (!members_.formed()) {
      for (int p = 0; p < opts_.num_processes; ++p) {
        if (members_.state(p) != MemberState::kPending || !links_[p].session) continue;
        reply(*links_[p].session, kRegistrationRequestId, {StatusCode::kDeadlineExceeded, why});
        release_pending(p);
      }
    }
    queued->set_value();
  });
  done.wait_for(std::chrono::seconds(5));
}

void CoordService::Impl::release_pending(int p) {
  Link& link = links_[p];
  if (link.session) link.session->process_id = -1;
  link = Link{};
  members_.release_pending(p);
  connection_gone();
}

// O(N + devices): once per cluster. The topology frame is encoded and compressed once and
// shared by all.
void CoordService::Impl::form() {
  wire::ServerMessage msg;
  msg.set_request_id(kRegistrationRequestId);
  msg.set_heartbeat_interval_ms(heartbeat_interval(opts_.heartbeat_timeout).count());
  wire::Topology topology;
  wire::Topology* topo = &topology;
  std::unordered_map<std::string, int> host_index;
  std::unordered_map<std::string, int> platform_index;
  for (int p = 0; p < opts_.num_processes; ++p) {
    const MemberInfo& info = members_.info(p);
    auto [it, inserted] = host_index.try_emplace(info.host_id, topo->hosts_size());
    if (inserted) {
      auto* h = topo->add_hosts();
      h->set_host_id(info.host_id);
      h->set_hostname(info.hostname);
    }
    topo->add_host_index(it->second);
    topo->add_pid(info.pid);
    topo->add_device_count(static_cast<int>(info.devices.size()));
    for (const auto& d : info.devices) {
      auto [pit, new_platform] = platform_index.try_emplace(d.platform(), topo->platforms_size());
      if (new_platform) topo->add_platforms(d.platform());
      topo->add_local_hardware_id(d.local_hardware_id());
      topo->add_platform_index(pit->second);
    }
  }
  pack_topology(std::move(topology), msg);
  members_.form();
  auto frame = std::make_shared<const std::string>(encode_message_frame(msg));
  const auto now = Clock::now();
  for (Link& link : links_) {
    link.last_heard = now;
    if (link.register_timer) link.register_timer->cancel();
    link.register_timer.reset();
    link.session->conn->send(frame);
  }
  spdlog::info("coordination service: all {} processes registered", opts_.num_processes);
  schedule_heartbeat_check();
}

}  // namespace spmd
