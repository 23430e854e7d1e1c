#include "coord/service.h"

#include <fmt/format.h>
#include <pthread.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <asio.hpp>
#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <unordered_map>
#include <vector>

#include "coord/address.h"
#include "coord/barrier_table.h"
#include "coord/connection.h"
#include "coord/kv_store.h"
#include "coord/wire.h"
#include "protocol.pb.h"
#include "spmd/error.h"

namespace spmd {

using Clock = std::chrono::steady_clock;
using tcp = asio::ip::tcp;
using std::chrono::milliseconds;

namespace {

// Bounds on what one registration may claim, so a hostile peer cannot make the topology huge.
constexpr int kMaxDevicesPerProcess = 1 << 16;
constexpr size_t kMaxHostIdBytes = 1024;
// Server-side timeouts asked for by clients are clamped to this (a day).
constexpr int64_t kMaxTimeoutMs = 24LL * 3600 * 1000;

bool tokens_equal(const std::string& a, const std::string& b) {
  // Constant time in the common length, so the comparison leaks nothing but the length.
  unsigned diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    diff |= static_cast<unsigned char>(a[i]) ^ static_cast<unsigned char>(b[i]);
  }
  return diff == 0;
}

milliseconds clamp_timeout(int64_t ms) {
  return milliseconds(std::clamp<int64_t>(ms, 0, kMaxTimeoutMs));
}

}  // namespace

class CoordService::Impl {
 public:
  explicit Impl(ServiceOptions options)
      : opts_(std::move(options)),
        acceptor_(io_),
        heartbeat_timer_(io_),
        barriers_(opts_.num_processes),
        slots_(static_cast<size_t>(opts_.num_processes)) {
    if (opts_.num_processes < 1) {
      throw InvalidArgument(
          fmt::format("num_processes must be at least 1, got {}", opts_.num_processes));
    }
    bind();
  }

  ~Impl() { stop(); }

  uint16_t port() const { return port_; }

  void start() {
    accept();
    thread_ = std::thread([this] {
      pthread_setname_np(pthread_self(), "spmd-coord");
      io_.run();
    });
  }

  void stop() {
    if (stopped_.exchange(true)) return;
    if (thread_.joinable()) {
      asio::post(io_, [this] { close_everything(); });
      // close_everything() lets queued answers go; the loop then stops by itself or here.
      asio::post(io_, [this] { io_.stop(); });
      thread_.join();
    }
  }

  bool wait_until_finished(milliseconds timeout) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, timeout, [&] { return finished_; });
  }

  bool wait_until_disconnected(milliseconds timeout, int still_open) const {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, timeout, [&] { return open_process_connections_ <= still_open; });
  }

  Stats stats() const {
    Stats out;
    out.dropped_connections = dropped_.load();
    out.barrier_arrivals = barrier_arrivals_.load();
    return out;
  }

 private:
  struct Session {
    std::shared_ptr<FramedConnection> conn;
    int process_id = -1;   // set once its registration is accepted
    bool dropped = false;  // closed by drop(), already logged and counted
    std::unique_ptr<asio::steady_timer> handshake_timer;
  };

  enum class SlotState { kEmpty, kPending, kLive, kLeaving, kLeft, kDead };

  struct Slot {
    SlotState state = SlotState::kEmpty;
    std::shared_ptr<Session> session;
    std::string host_id;
    std::string hostname;
    int64_t pid = 0;
    std::vector<wire::DeviceInfo> devices;
    std::shared_ptr<asio::steady_timer> register_timer;
    Clock::time_point last_heard;
  };

  void bind() {
    const HostPort hp = parse_host_port(opts_.bind_address, "coordinator_bind_address", true);
    asio::error_code ec;
    std::vector<tcp::endpoint> endpoints;
    if (hp.host == "::" || hp.host == "0.0.0.0") {
      if (hp.host == "::") endpoints.emplace_back(asio::ip::address_v6::any(), hp.port);
      endpoints.emplace_back(asio::ip::address_v4::any(), hp.port);
    } else {
      tcp::resolver resolver(io_);
      auto results = resolver.resolve(hp.host, std::to_string(hp.port), ec);
      if (ec) {
        throw Error(fmt::format("the coordination service cannot resolve its bind address '{}': {}",
                                opts_.bind_address, ec.message()));
      }
      for (const auto& r : results) endpoints.push_back(r.endpoint());
    }
    std::string last_error = "no address to bind";
    for (const auto& ep : endpoints) {
      acceptor_.close(ec);
      acceptor_.open(ep.protocol(), ec);
      if (ec) {
        last_error = ec.message();
        continue;
      }
      if (ep.address().is_v6()) acceptor_.set_option(asio::ip::v6_only(false), ec);
      acceptor_.set_option(tcp::acceptor::reuse_address(true), ec);
      acceptor_.bind(ep, ec);
      if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
      if (!ec) {
        port_ = acceptor_.local_endpoint().port();
        return;
      }
      last_error = ec.message();
    }
    throw Error(fmt::format(
        "the coordination service cannot listen on {}: {}. If another process (or an earlier run) "
        "holds the port, choose another port in coordinator_address",
        opts_.bind_address, last_error));
  }

  void accept() {
    acceptor_.async_accept([this](asio::error_code ec, tcp::socket socket) {
      if (ec) {
        if (ec != asio::error::operation_aborted && acceptor_.is_open()) {
          spdlog::warn("coordination service: accept failed: {}", ec.message());
          accept();
        }
        return;
      }
      on_accept(std::move(socket));
      accept();
    });
  }

  void on_accept(tcp::socket socket) {
    auto session = std::make_shared<Session>();
    session->conn = std::make_shared<FramedConnection>(std::move(socket));
    session->handshake_timer = std::make_unique<asio::steady_timer>(io_, opts_.handshake_timeout);
    session->handshake_timer->async_wait(
        [this, weak = std::weak_ptr(session)](asio::error_code ec) {
          auto s = weak.lock();
          if (ec || !s || s->process_id >= 0) return;
          drop(*s, fmt::format("no registration within {} ms of connecting",
                               opts_.handshake_timeout.count()));
        });
    sessions_.insert(session);
    std::weak_ptr<Session> weak = session;
    session->conn->start(
        [this, weak](std::string_view payload) {
          if (auto s = weak.lock()) on_message(s, payload);
        },
        [this, weak](const std::string& reason) {
          if (auto s = weak.lock()) on_close(s, reason);
        });
  }

  void drop(Session& session, const std::string& reason) {
    if (session.dropped) return;
    session.dropped = true;
    spdlog::warn("coordination service: dropping connection from {}: {}", session.conn->peer(),
                 reason);
    ++dropped_;
    session.conn->close(reason);
  }

  void send(Session& session, const wire::ServerMessage& msg) {
    session.conn->send(std::make_shared<const std::string>(encode_message_frame(msg)));
  }

  void reply(Session& session, uint64_t request_id, const Status& status) {
    wire::ServerMessage msg;
    msg.set_request_id(request_id);
    msg.set_code(static_cast<wire::Code>(status.code));
    msg.set_message(status.message);
    send(session, msg);
  }

  void reply_ok(Session& session, uint64_t request_id, wire::ServerMessage msg) {
    msg.set_request_id(request_id);
    send(session, msg);
  }

  void on_message(const std::shared_ptr<Session>& session, std::string_view payload) {
    wire::ClientMessage msg;
    if (!msg.ParseFromArray(payload.data(), static_cast<int>(payload.size()))) {
      drop(*session, "undecodable message (not a ClientMessage)");
      return;
    }
    const int p = session->process_id;
    if (p < 0) {
      if (msg.body_case() != wire::ClientMessage::kRegistration) {
        drop(*session, "the first message was not a registration");
        return;
      }
      on_register(session, msg.request_id(), msg.registration());
      return;
    }
    Slot& slot = slots_[p];
    if (slot.session != session) return;  // a stale connection of a replaced registration
    slot.last_heard = Clock::now();
    if (msg.body_case() == wire::ClientMessage::kHeartbeat) {
      wire::ServerMessage ack;
      ack.mutable_heartbeat_ack();
      send(*session, ack);
      return;
    }
    if (!formed_) {
      reply(*session, msg.request_id(),
            {StatusCode::kFailedPrecondition, "the cluster has not formed yet"});
      return;
    }
    if (slot.state == SlotState::kDead) return;
    switch (msg.body_case()) {
      case wire::ClientMessage::kKvSet:
        return on_kv_set(*session, msg.request_id(), msg.kv_set());
      case wire::ClientMessage::kKvGet:
        return on_kv_get(session, msg.request_id(), msg.kv_get());
      case wire::ClientMessage::kKvDirGet: {
        wire::ServerMessage out;
        for (auto& [k, v] : kv_.dir_get(msg.kv_dir_get().prefix())) {
          auto* e = out.mutable_entries()->add_entries();
          e->set_key(k);
          e->set_value(v);
        }
        return reply_ok(*session, msg.request_id(), std::move(out));
      }
      case wire::ClientMessage::kKvDelete:
        kv_.erase(msg.kv_delete().key());
        return reply(*session, msg.request_id(), {});
      case wire::ClientMessage::kKvIncrement: {
        auto result = kv_.increment(msg.kv_increment().key(), msg.kv_increment().delta());
        if (auto* err = std::get_if<std::string>(&result)) {
          return reply(*session, msg.request_id(), {StatusCode::kInvalidArgument, *err});
        }
        wire::ServerMessage out;
        out.set_counter(std::get<int64_t>(result));
        return reply_ok(*session, msg.request_id(), std::move(out));
      }
      case wire::ClientMessage::kBarrier:
        return on_barrier(session, msg.request_id(), msg.barrier());
      case wire::ClientMessage::kLiveProcesses: {
        wire::ServerMessage out;
        for (int i = 0; i < opts_.num_processes; ++i) {
          auto s = slots_[i].state;
          if (s == SlotState::kLive || s == SlotState::kLeaving)
            out.mutable_live()->add_process_ids(i);
        }
        return reply_ok(*session, msg.request_id(), std::move(out));
      }
      case wire::ClientMessage::kShutdown:
        return on_shutdown(session, msg.request_id(), msg.shutdown());
      case wire::ClientMessage::kRegistration:
        return reply(*session, msg.request_id(),
                     {StatusCode::kFailedPrecondition, "this connection is already registered"});
      default:
        drop(*session, "a message with no known body");
    }
  }

  void on_register(const std::shared_ptr<Session>& session, uint64_t request_id,
                   const wire::RegisterRequest& req) {
    if (request_id != kRegistrationRequestId) {
      drop(*session, "a registration that is not request 1");
      return;
    }
    auto refuse = [&](StatusCode code, const std::string& message) {
      spdlog::warn("coordination service: refused registration from {}: {}", session->conn->peer(),
                   message);
      reply(*session, request_id, {code, message});
      session->conn->close_after_writes("registration refused");
    };
    // Authentication comes first, so a wrong token learns nothing about the cluster.
    if (!tokens_equal(req.auth_token(), opts_.auth_token)) {
      refuse(StatusCode::kPermissionDenied,
             "authentication failed: this process's auth token (Options::auth_token / "
             "SPMD_AUTH_TOKEN) does not match the coordination service's");
      return;
    }
    const int p = req.process_id();
    if (req.num_processes() != opts_.num_processes) {
      refuse(StatusCode::kInvalidArgument,
             fmt::format("process {} was started with num_processes={}, but the coordination "
                         "service serves a cluster of {} processes; every process must pass the "
                         "same num_processes",
                         p, req.num_processes(), opts_.num_processes));
      return;
    }
    if (p < 0 || p >= opts_.num_processes) {
      refuse(StatusCode::kInvalidArgument,
             fmt::format("process_id {} is outside 0..{}", p, opts_.num_processes - 1));
      return;
    }
    if (req.devices_size() > kMaxDevicesPerProcess || req.host_id().size() > kMaxHostIdBytes ||
        req.hostname().size() > kMaxHostIdBytes) {
      refuse(StatusCode::kInvalidArgument, "registration exceeds the limits on devices or names");
      return;
    }
    Slot& slot = slots_[p];
    if (slot.state != SlotState::kEmpty) {
      refuse(StatusCode::kAlreadyExists,
             fmt::format("process id {} is already taken by the process on host {} with pid {}; "
                         "every process needs its own id in 0..{}",
                         p, slot.hostname, slot.pid, opts_.num_processes - 1));
      return;
    }
    if (formed_) {
      refuse(StatusCode::kFailedPrecondition, "the cluster has already formed");
      return;
    }
    session->process_id = p;
    session->handshake_timer->cancel();
    slot.state = SlotState::kPending;
    slot.session = session;
    slot.host_id = req.host_id();
    slot.hostname = req.hostname();
    slot.pid = req.pid();
    slot.devices.assign(req.devices().begin(), req.devices().end());
    {
      std::lock_guard lock(mu_);
      ++open_process_connections_;
    }
    ++pending_count_;
    const milliseconds timeout = clamp_timeout(req.timeout_ms());
    slot.register_timer = std::make_shared<asio::steady_timer>(io_, timeout);
    slot.register_timer->async_wait(
        [this, p, weak = std::weak_ptr(session), timeout](asio::error_code ec) {
          auto s = weak.lock();
          if (ec || !s || formed_ || slots_[p].session != s) return;
          std::vector<int> missing;
          for (int i = 0; i < opts_.num_processes; ++i) {
            if (slots_[i].state == SlotState::kEmpty) missing.push_back(i);
          }
          reply(*s, kRegistrationRequestId,
                {StatusCode::kDeadlineExceeded,
                 fmt::format("only {} of {} processes registered with the coordination service "
                             "within {} ms; missing process ids: {}. Start every process with the "
                             "same coordinator_address and num_processes, or raise "
                             "initialization_timeout",
                             pending_count_, opts_.num_processes, timeout.count(),
                             format_process_list(missing))});
          release_pending(p);
        });
    if (pending_count_ == opts_.num_processes) form();
  }

  void release_pending(int p) {
    Slot& slot = slots_[p];
    if (slot.session) slot.session->process_id = -1;
    slot = Slot{};
    --pending_count_;
    std::lock_guard lock(mu_);
    --open_process_connections_;
    cv_.notify_all();
  }

  void form() {
    formed_ = true;
    wire::ServerMessage msg;
    msg.set_request_id(kRegistrationRequestId);
    msg.set_heartbeat_interval_ms(heartbeat_interval(opts_.heartbeat_timeout).count());
    wire::Topology* topo = msg.mutable_topology();
    std::unordered_map<std::string, int> host_index;
    std::unordered_map<std::string, int> platform_index;
    for (int p = 0; p < opts_.num_processes; ++p) {
      Slot& slot = slots_[p];
      auto [it, inserted] = host_index.try_emplace(slot.host_id, topo->hosts_size());
      if (inserted) {
        auto* h = topo->add_hosts();
        h->set_host_id(slot.host_id);
        h->set_hostname(slot.hostname);
      }
      topo->add_host_index(it->second);
      topo->add_pid(slot.pid);
      topo->add_device_count(static_cast<int>(slot.devices.size()));
      for (const auto& d : slot.devices) {
        auto [pit, new_platform] = platform_index.try_emplace(d.platform(), topo->platforms_size());
        if (new_platform) topo->add_platforms(d.platform());
        topo->add_local_hardware_id(d.local_hardware_id());
        topo->add_platform_index(pit->second);
      }
    }
    // One buffer for every process: the topology is the same for all.
    auto frame = std::make_shared<const std::string>(encode_message_frame(msg));
    const auto now = Clock::now();
    for (Slot& slot : slots_) {
      slot.state = SlotState::kLive;
      slot.last_heard = now;
      if (slot.register_timer) slot.register_timer->cancel();
      slot.session->conn->send(frame);
    }
    spdlog::info("coordination service: all {} processes registered", opts_.num_processes);
    schedule_heartbeat_check();
  }

  void schedule_heartbeat_check() {
    const auto interval =
        std::clamp(opts_.heartbeat_timeout / 4, milliseconds(20), milliseconds(5000));
    heartbeat_timer_.expires_after(interval);
    heartbeat_timer_.async_wait([this](asio::error_code ec) {
      if (ec) return;
      const auto now = Clock::now();
      for (int p = 0; p < opts_.num_processes; ++p) {
        Slot& slot = slots_[p];
        if (slot.state != SlotState::kLive && slot.state != SlotState::kLeaving) continue;
        if (now - slot.last_heard > opts_.heartbeat_timeout) {
          declare_dead(p, fmt::format("no heartbeat for {} ms (the process hangs, is stopped, or "
                                      "its host is unreachable)",
                                      opts_.heartbeat_timeout.count()));
        }
      }
      if (!finished()) schedule_heartbeat_check();
    });
  }

  void on_close(const std::shared_ptr<Session>& session, const std::string& reason) {
    sessions_.erase(session);
    session->handshake_timer->cancel();
    const int p = session->process_id;
    if (p < 0) {
      // Bad frames are refused inside the connection; they count as drops like the rest.
      if (!stopping_ && reason != "connection closed by peer") drop(*session, reason);
      return;
    }
    Slot& slot = slots_[p];
    if (slot.session != session) return;
    if (!formed_) {
      spdlog::info(
          "coordination service: process {} (host {}, pid {}) disconnected before the "
          "cluster formed: {}",
          p, slot.hostname, slot.pid, reason);
      release_pending(p);
      return;
    }
    {
      std::lock_guard lock(mu_);
      --open_process_connections_;
      cv_.notify_all();
    }
    slot.session->process_id = -1;
    if (stopping_) return;  // the service itself is going away; nobody failed
    if (slot.state == SlotState::kLive || slot.state == SlotState::kLeaving) {
      declare_dead(p, "connection lost (" + reason + ")");
    }
  }

  void declare_dead(int p, const std::string& reason) {
    Slot& slot = slots_[p];
    slot.state = SlotState::kDead;
    const std::string who = fmt::format("process {} (host {}, pid {})", p, slot.hostname, slot.pid);
    if (any_failure_) {
      // Most likely it stopped because it heard of the first failure; that one was logged.
      spdlog::info("coordination service: {} is gone too: {}", who, reason);
    } else {
      spdlog::error("coordination service: {} failed: {}", who, reason);
    }
    any_failure_ = true;
    wire::ServerMessage notice;
    auto* pf = notice.mutable_peer_failed();
    pf->set_process_id(p);
    pf->set_hostname(slot.hostname);
    pf->set_pid(slot.pid);
    pf->set_reason(reason);
    auto frame = std::make_shared<const std::string>(encode_message_frame(notice));
    for (Slot& other : slots_) {
      if ((other.state == SlotState::kLive || other.state == SlotState::kLeaving) &&
          other.session) {
        other.session->conn->send(frame);
      }
    }
    barriers_.fail_process(p, StatusCode::kPeerFailure, who + " failed: " + reason);
    if (slot.session && slot.session->process_id == p) slot.session->conn->close("declared dead");
    check_shutdown();
    update_finished();
  }

  void on_kv_set(Session& session, uint64_t request_id, const wire::KvSetRequest& req) {
    if (req.key().empty()) {
      return reply(session, request_id, {StatusCode::kInvalidArgument, "empty key"});
    }
    if (!kv_.set(req.key(), req.value(), req.allow_overwrite())) {
      return reply(session, request_id,
                   {StatusCode::kAlreadyExists,
                    fmt::format("key '{}' already has a value; pass allow_overwrite=true to "
                                "replace it",
                                req.key())});
    }
    reply(session, request_id, {});
  }

  void on_kv_get(const std::shared_ptr<Session>& session, uint64_t request_id,
                 const wire::KvGetRequest& req) {
    if (const std::string* value = kv_.find(req.key())) {
      wire::ServerMessage out;
      out.set_value(*value);
      return reply_ok(*session, request_id, std::move(out));
    }
    if (!req.blocking()) return reply(*session, request_id, {});
    const milliseconds timeout = clamp_timeout(req.timeout_ms());
    auto timer = std::make_shared<asio::steady_timer>(io_, timeout);
    const uint64_t token =
        kv_.wait(req.key(), [this, session, request_id, timer](const std::string& value) {
          timer->cancel();
          wire::ServerMessage out;
          out.set_value(value);
          reply_ok(*session, request_id, std::move(out));
        });
    timer->async_wait([this, session, request_id, token, key = req.key(),
                       timeout](asio::error_code ec) {
      if (ec || !kv_.cancel_wait(token)) return;
      reply(
          *session, request_id,
          {StatusCode::kDeadlineExceeded,
           fmt::format("key '{}' was not set by any process within {} ms", key, timeout.count())});
    });
  }

  void on_barrier(const std::shared_ptr<Session>& session, uint64_t request_id,
                  const wire::BarrierRequest& req) {
    ++barrier_arrivals_;
    const int p = session->process_id;
    std::vector<int> participants(req.process_ids().begin(), req.process_ids().end());
    for (int q : participants) {
      if (q >= 0 && q < opts_.num_processes && slots_[q].state == SlotState::kDead) {
        return reply(*session, request_id,
                     {StatusCode::kPeerFailure,
                      fmt::format("barrier '{}' cannot complete: process {} (host {}, pid {}) is "
                                  "dead",
                                  req.id(), q, slots_[q].hostname, slots_[q].pid)});
      }
    }
    if (const auto q = left_participant(participants)) {
      return reply(*session, request_id,
                   {StatusCode::kPeerFailure,
                    fmt::format("barrier '{}' cannot complete: process {} (host {}, pid {}) "
                                "called shutdown() and will not arrive",
                                req.id(), *q, slots_[*q].hostname, slots_[*q].pid)});
    }
    auto key = barriers_.arrive(
        req.id(), p, participants,
        [this, session, request_id](const Status& status) { reply(*session, request_id, status); });
    if (!key) return;
    const milliseconds timeout = clamp_timeout(req.timeout_ms());
    auto timer = std::make_shared<asio::steady_timer>(io_, timeout);
    timer->async_wait([this, timer, key = *key, timeout](asio::error_code ec) {
      if (!ec) barriers_.expire(key, fmt::format("{} ms", timeout.count()));
    });
  }

  void on_shutdown(const std::shared_ptr<Session>& session, uint64_t request_id,
                   const wire::ShutdownRequest& req) {
    const int p = session->process_id;
    Slot& slot = slots_[p];
    if (slot.state != SlotState::kLive) {
      return reply(*session, request_id,
                   {StatusCode::kFailedPrecondition, "this process is already shutting down"});
    }
    slot.state = SlotState::kLeaving;
    shutdown_waiters_[p] = request_id;
    announce_leaving(p);
    const milliseconds timeout = clamp_timeout(req.timeout_ms());
    auto timer = std::make_shared<asio::steady_timer>(io_, timeout);
    timer->async_wait([this, timer, p, timeout](asio::error_code ec) {
      if (ec || shutdown_waiters_.count(p) == 0) return;
      std::vector<int> running;
      for (int i = 0; i < opts_.num_processes; ++i) {
        if (slots_[i].state == SlotState::kLive) running.push_back(i);
      }
      release_shutdown_waiters(
          {StatusCode::kDeadlineExceeded,
           fmt::format("the shutdown barrier timed out after {} ms: processes {} never called "
                       "shutdown(); this process left without them",
                       timeout.count(), format_process_list(running))});
    });
    check_shutdown();
  }

  // Tells the processes still running that `p` called shutdown(): it will make no more calls, so
  // a collective waiting for it can fail at once instead of hanging until the shutdown barrier
  // times out; pending and later barriers that need it fail now.
  void announce_leaving(int p) {
    const Slot& slot = slots_[p];
    ++leaving_count_;
    const std::string who = fmt::format("process {} (host {}, pid {})", p, slot.hostname, slot.pid);
    wire::ServerMessage notice;
    auto* pl = notice.mutable_peer_leaving();
    pl->set_process_id(p);
    pl->set_hostname(slot.hostname);
    pl->set_pid(slot.pid);
    auto frame = std::make_shared<const std::string>(encode_message_frame(notice));
    for (int q = 0; q < opts_.num_processes; ++q) {
      if (q != p && slots_[q].state == SlotState::kLive && slots_[q].session) {
        slots_[q].session->conn->send(frame);
      }
    }
    barriers_.fail_process(p, StatusCode::kPeerFailure,
                           who + " called shutdown() and will not arrive");
  }

  // The first participant of a barrier that has left (called shutdown), if any.
  std::optional<int> left_participant(const std::vector<int>& participants) const {
    if (leaving_count_ == 0) return std::nullopt;  // the common case costs nothing
    auto gone = [&](int q) {
      return slots_[q].state == SlotState::kLeaving || slots_[q].state == SlotState::kLeft;
    };
    if (participants.empty()) {
      for (int q = 0; q < opts_.num_processes; ++q) {
        if (gone(q)) return q;
      }
    }
    for (int q : participants) {
      if (q >= 0 && q < opts_.num_processes && gone(q)) return q;
    }
    return std::nullopt;
  }

  void check_shutdown() {
    if (shutdown_waiters_.empty()) return;
    for (const Slot& slot : slots_) {
      if (slot.state == SlotState::kLive) return;
    }
    release_shutdown_waiters({});
  }

  void release_shutdown_waiters(const Status& status) {
    auto waiters = std::move(shutdown_waiters_);
    shutdown_waiters_.clear();
    for (auto& [p, request_id] : waiters) {
      Slot& slot = slots_[p];
      if (slot.state != SlotState::kLeaving) continue;
      slot.state = SlotState::kLeft;
      if (slot.session) reply(*slot.session, request_id, status);
    }
    update_finished();
  }

  bool finished() const {
    if (!formed_) return false;
    for (const Slot& slot : slots_) {
      if (slot.state != SlotState::kLeft && slot.state != SlotState::kDead) return false;
    }
    return true;
  }

  void update_finished() {
    if (!finished()) return;
    std::lock_guard lock(mu_);
    finished_ = true;
    cv_.notify_all();
  }

  void close_everything() {
    stopping_ = true;
    asio::error_code ignored;
    acceptor_.close(ignored);
    heartbeat_timer_.cancel();
    // Closing a session removes it from sessions_: iterate over a copy.
    const auto sessions = sessions_;
    for (const auto& s : sessions) s->conn->close("coordination service stopped");
  }

  ServiceOptions opts_;
  asio::io_context io_;
  tcp::acceptor acceptor_;
  asio::steady_timer heartbeat_timer_;
  uint16_t port_ = 0;
  std::thread thread_;
  std::atomic<bool> stopped_{false};

  // Event-loop state.
  KvStore kv_;
  BarrierTable barriers_;
  std::vector<Slot> slots_;
  std::set<std::shared_ptr<Session>> sessions_;
  int pending_count_ = 0;
  bool formed_ = false;
  bool stopping_ = false;
  bool any_failure_ = false;
  std::map<int, uint64_t> shutdown_waiters_;
  uint64_t leaving_count_ = 0;  // processes that called shutdown()

  // Shared with waiting threads.
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  bool finished_ = false;
  int open_process_connections_ = 0;
  std::atomic<uint64_t> dropped_{0};
  std::atomic<uint64_t> barrier_arrivals_{0};
};

CoordService::CoordService(ServiceOptions options)
    : impl_(std::make_unique<Impl>(std::move(options))) {}
CoordService::~CoordService() = default;
uint16_t CoordService::port() const { return impl_->port(); }
void CoordService::start() { impl_->start(); }
void CoordService::stop() { impl_->stop(); }
bool CoordService::wait_until_finished(milliseconds timeout) {
  return impl_->wait_until_finished(timeout);
}
bool CoordService::wait_until_disconnected(milliseconds timeout, int still_open) const {
  return impl_->wait_until_disconnected(timeout, still_open);
}
CoordService::Stats CoordService::stats() const { return impl_->stats(); }

}  // namespace spmd
