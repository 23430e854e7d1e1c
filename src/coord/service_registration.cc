// Registration: checking a process's claim, holding it until every process has come, and forming
// the cluster with one topology for all (service_registration.h).
#include "coord/service_registration.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <future>
#include <map>
#include <unordered_map>

#include "coord/auth_token.h"
#include "coord/topology_codec.h"
#include "coord/wire.h"

namespace spmd {

using SessionPtr = ServiceContext::SessionPtr;

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

// "processes 1, 3 (on b, c) have 4 cpu devices".
std::string device_group(const Membership& members, size_t count, const std::vector<int>& ids) {
  std::vector<std::string> hosts;
  for (int p : ids) {
    const std::string& h = members.info(p).hostname;
    if (hosts.size() < 4 && std::find(hosts.begin(), hosts.end(), h) == hosts.end())
      hosts.push_back(h);
  }
  const auto& devices = members.info(ids.front()).devices;
  return fmt::format(
      "process{} {} (on {}) ha{} {} {}device{}", ids.size() == 1 ? "" : "es",
      format_process_list(ids, 8), fmt::join(hosts, ", "), ids.size() == 1 ? "s" : "ve", count,
      devices.empty() ? "" : devices.front().platform() + " ", count == 1 ? "" : "s");
}

// JAX's rule for a multi-process job: every process holds as many local devices as the others.
// nullopt when they do; otherwise why not, naming who holds how many.
std::optional<std::string> unequal_devices(const Membership& members, int num_processes) {
  std::map<size_t, std::vector<int>> by_count;
  for (int p = 0; p < num_processes; ++p) by_count[members.info(p).devices.size()].push_back(p);
  if (by_count.size() == 1) return std::nullopt;
  std::vector<std::string> groups;
  groups.reserve(by_count.size());
  for (const auto& [count, ids] : by_count) groups.push_back(device_group(members, count, ids));
  return fmt::format(
      "every process must have the same number of local devices, but {}. Give every process the "
      "same num_cpu_devices (SPMD_CPU_DEVICES) and local_device_ids (SPMD_LOCAL_DEVICE_IDS), or "
      "on GPUs the same number of visible GPUs",
      fmt::join(groups, "; "));
}

}  // namespace

Registrar::Registrar(ServiceContext& cx, Departures& departures)
    : cx_(cx), departures_(departures) {}

std::optional<Status> Registrar::check_registration(const wire::RegisterRequest& req) const {
  // Authentication comes first, so a wrong token learns nothing about the cluster.
  if (!tokens_equal(req.auth_token(), cx_.opts.auth_token)) {
    return Status{StatusCode::kPermissionDenied,
                  "authentication failed: this process's auth token (Options::auth_token / "
                  "SPMD_AUTH_TOKEN) does not match the coordination service's"};
  }
  const int p = req.process_id();
  const int n = cx_.opts.num_processes;
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
  if (cx_.members.state(p) != MemberState::kEmpty) {
    return Status{StatusCode::kAlreadyExists,
                  fmt::format("process id {} is already taken by the process on host {} with "
                              "pid {}; every process needs its own id in 0..{}",
                              p, cx_.members.info(p).hostname, cx_.members.info(p).pid, n - 1)};
  }
  if (cx_.members.formed()) {
    return Status{StatusCode::kFailedPrecondition, "the cluster has already formed"};
  }
  return std::nullopt;
}

void Registrar::on_register(const SessionPtr& session, uint64_t request_id,
                            const wire::RegisterRequest& req) {
  if (request_id != kRegistrationRequestId) {
    cx_.drop(*session, "a registration that is not request 1");
    return;
  }
  if (const auto refusal = check_registration(req)) {
    cx_.refusals.refused(session->conn->peer(), "a registration: " + refusal->message);
    cx_.reply(*session, request_id, *refusal);
    session->conn->close_after_writes("registration refused");
    return;
  }
  const int p = req.process_id();
  session->process_id = p;
  cx_.admission.registered(*session);
  session->handshake_timer->cancel();
  session->conn->set_max_frame_bytes(kMaxFrameBytes);
  cx_.links[p].session = session;
  cx_.connection_opened();
  const bool everyone = cx_.members.register_pending(p, member_info(req));
  start_register_timer(p, session, clamp_client_timeout(req.timeout_ms()));
  if (!everyone) return;
  if (const auto why = unequal_devices(cx_.members, cx_.opts.num_processes)) {
    spdlog::warn("coordination service: not forming the cluster: {}", *why);
    for (int q = 0; q < cx_.opts.num_processes; ++q) {
      if (const SessionPtr pending = cx_.links[q].session) {
        cx_.reply(*pending, kRegistrationRequestId, {StatusCode::kInvalidArgument, *why});
        release_pending(q);
      }
    }
    return;
  }
  form();
}

void Registrar::start_register_timer(int p, const SessionPtr& session,
                                     ServiceContext::milliseconds timeout) {
  auto timer = std::make_shared<asio::steady_timer>(cx_.io, timeout);
  cx_.links[p].register_timer = timer;
  timer->async_wait([this, p, weak = std::weak_ptr(session), timeout](asio::error_code ec) {
    auto s = weak.lock();
    if (ec || !s || cx_.members.formed() || cx_.links[p].session != s) return;
    cx_.reply(
        *s, kRegistrationRequestId,
        {StatusCode::kDeadlineExceeded,
         fmt::format("only {} of {} processes registered with the coordination service within "
                     "{} ms; missing process ids: {}. Start every process with the same "
                     "coordinator_address and num_processes, or raise initialization_timeout.{}",
                     cx_.members.pending_count(), cx_.opts.num_processes, timeout.count(),
                     format_process_list(cx_.members.missing()), strangers_note())});
    release_pending(p);
  });
}

std::string Registrar::strangers_note() const {
  const uint64_t refused = cx_.refusals.total();
  if (refused == 0) return "";
  return fmt::format(
      " Meanwhile the service refused or dropped {} connection{} that did not authenticate, from "
      "{}: something other than this job's processes is connecting to its port, and may have "
      "crowded the missing ones out. Serve the job's network only (coordinator_bind_address), or "
      "close the port to other hosts",
      refused, refused == 1 ? "" : "s", cx_.refusals.by_host(4));
}

void Registrar::fail_registrations(const std::string& why) {
  // Shared with the handler: after the bounded wait below gives up, it may still run.
  auto queued = std::make_shared<std::promise<void>>();
  std::future<void> done = queued->get_future();
  asio::post(cx_.io, [this, queued, why] {
    if (!cx_.members.formed()) {
      for (int p = 0; p < cx_.opts.num_processes; ++p) {
        if (cx_.members.state(p) != MemberState::kPending || !cx_.links[p].session) continue;
        cx_.reply(*cx_.links[p].session, kRegistrationRequestId,
                  {StatusCode::kDeadlineExceeded, why});
        release_pending(p);
      }
    }
    queued->set_value();
  });
  done.wait_for(std::chrono::seconds(5));
}

void Registrar::release_pending(int p) {
  ServiceContext::Link& link = cx_.links[p];
  if (link.session) link.session->process_id = -1;
  link = ServiceContext::Link{};
  cx_.members.release_pending(p);
  cx_.connection_gone();
}

// The topology frame is encoded and compressed once and shared by all.
void Registrar::form() {
  wire::ServerMessage msg;
  msg.set_request_id(kRegistrationRequestId);
  msg.set_heartbeat_interval_ms(heartbeat_interval(cx_.opts.heartbeat_timeout).count());
  wire::Topology topology;
  wire::Topology* topo = &topology;
  std::unordered_map<std::string, int> host_index;
  std::unordered_map<std::string, int> platform_index;
  std::unordered_map<std::string, int> kind_index;
  bool kinds = false;  // some device names a kind of its own
  for (int p = 0; p < cx_.opts.num_processes && !kinds; ++p) {
    for (const auto& d : cx_.members.info(p).devices) kinds = kinds || !d.device_kind().empty();
  }
  for (int p = 0; p < cx_.opts.num_processes; ++p) {
    const MemberInfo& info = cx_.members.info(p);
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
      if (kinds) {
        auto [kit, new_kind] = kind_index.try_emplace(d.device_kind(), topo->device_kinds_size());
        if (new_kind) topo->add_device_kinds(d.device_kind());
        topo->add_device_kind_index(kit->second);
      }
    }
  }
  pack_topology(std::move(topology), msg);
  cx_.members.form();
  auto frame = std::make_shared<const std::string>(encode_message_frame(msg));
  const auto now = ServiceContext::Clock::now();
  for (ServiceContext::Link& link : cx_.links) {
    link.last_heard = now;
    if (link.register_timer) link.register_timer->cancel();
    link.register_timer.reset();
    link.session->conn->send(frame);
  }
  spdlog::info("coordination service: all {} processes registered", cx_.opts.num_processes);
  departures_.schedule_heartbeat_check();
}

}  // namespace spmd
