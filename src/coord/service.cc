// The service's life cycle, its connections and the one dispatch of client messages.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>

#include "coord/listen.h"
#include "coord/open_file_limit.h"
#include "coord/service_impl.h"
#include "coord/wire.h"
#include "spmd/error.h"

namespace spmd {

namespace {

// The event loop's stack. Its handlers never recurse (FramedConnection posts every close, and
// deaths found while handling one are queued), so they need a few tens of KiB; the margin is for
// protobuf parsing and formatting. Fixed, so a recursion that grows with the cluster fails in
// the tests at 2048 processes rather than at 16384 in a user's job.
constexpr size_t kEventLoopStackBytes = size_t{512} * 1024;

// Listening sockets per process count (listen.h says why several): one per 2048 processes, so
// that even an uneven spread of connections over them stays within each one's queue of 4096.
int listener_count(int num_processes) { return std::clamp((num_processes + 2047) / 2048, 1, 16); }

constexpr int kDescriptorMargin = 256;

// Connections the service holds beyond one per process: a replaced registration's new
// connection, status queries. More are refused at accept, so strangers can hold at most this
// many unregistered connections, each buffering at most kMaxRegistrationFrameBytes; the margin
// stays below kDescriptorMargin so refusing never runs the service out of descriptors.
constexpr size_t kSpareConnections = 128;

// A day: server-side timeouts asked for by clients are clamped to it.
constexpr int64_t kMaxTimeoutMs = 24LL * 3600 * 1000;

// Checked before any per-process state is allocated.
ServiceOptions checked(ServiceOptions options) {
  if (options.num_processes < 1) {
    throw InvalidArgument(
        fmt::format("num_processes must be at least 1, got {}", options.num_processes));
  }
  // One descriptor per process, and a margin for the hosting process's own (process 0's
  // shared memory and data-plane sockets).
  raise_open_file_limit(options.num_processes + kDescriptorMargin, "the coordination service");
  return options;
}

}  // namespace

std::chrono::milliseconds clamp_client_timeout(int64_t ms) {
  return std::chrono::milliseconds(std::clamp<int64_t>(ms, 0, kMaxTimeoutMs));
}

CoordService::Impl::Impl(ServiceOptions options)
    : opts_(checked(std::move(options))),
      heartbeat_timer_(io_),
      leaver_timer_(io_),
      barriers_(opts_.num_processes),
      members_(opts_.num_processes),
      board_(opts_.num_processes),
      links_(static_cast<size_t>(opts_.num_processes)) {
  acceptors_ = listen_on(io_, opts_.bind_address, listener_count(opts_.num_processes));
  for (auto& a : acceptors_) a.non_blocking(true);
  port_ = acceptors_.front().local_endpoint().port();
  barriers_.on_settled([this](const BarrierTable::InstanceKey& key) {
    barrier_deadlines_.erase({key.id, key.generation});  // destroying the timer cancels it
  });
  if (!opts_.status_http_address.empty()) {
    http_ = std::make_unique<StatusHttpServer>(io_, opts_.status_http_address, opts_.auth_token,
                                               [this] { return status_json(status_table()); });
  }
}

void CoordService::Impl::start() {
  for (auto& a : acceptors_) accept(a);
  if (http_) http_->start();
  thread_.start("spmd-coord", kEventLoopStackBytes, [this] { io_.run(); });
}

void CoordService::Impl::stop() {
  if (stopped_.exchange(true)) return;
  if (thread_.joinable()) {
    asio::post(io_, [this] { close_everything(); });
    // close_everything() lets queued answers go; the loop then stops by itself or here.
    asio::post(io_, [this] { io_.stop(); });
    thread_.join();
  }
}

bool CoordService::Impl::wait_until_finished(milliseconds timeout) {
  std::unique_lock lock(mu_);
  return cv_.wait_for(lock, timeout, [&] { return finished_; });
}

bool CoordService::Impl::wait_until_disconnected(milliseconds timeout, int still_open) const {
  std::unique_lock lock(mu_);
  return cv_.wait_for(lock, timeout, [&] { return open_process_connections_ <= still_open; });
}

CoordService::Stats CoordService::Impl::stats() const {
  Stats out;
  out.dropped_connections = dropped_.load();
  out.barrier_arrivals = barrier_arrivals_.load();
  out.shutdown_arrivals = shutdown_arrivals_.load();
  out.deaths = deaths_.load();
  return out;
}

// Accepts every connection waiting in the kernel's queue at each wake-up, before any of their
// messages is read: when thousands of processes connect at once, the queue (at most somaxconn,
// 4096 on Debian) overflows if it is drained one connection per turn of the loop between
// thousands of registrations, and each dropped SYN costs its process a 1-3-7 s retransmission.
void CoordService::Impl::accept(asio::ip::tcp::acceptor& acceptor) {
  acceptor.async_wait(asio::ip::tcp::acceptor::wait_read, [this, &acceptor](asio::error_code ec) {
    if (ec) {
      if (ec != asio::error::operation_aborted && acceptor.is_open()) {
        spdlog::warn("coordination service: waiting for connections failed: {}", ec.message());
        accept(acceptor);
      }
      return;
    }
    while (true) {
      asio::ip::tcp::socket socket(io_);
      acceptor.accept(socket, ec);
      if (ec == asio::error::would_block || ec == asio::error::try_again) break;
      if (ec) {
        // Out of descriptors or the like: logged, and tried again at the next wake-up.
        if (!acceptor.is_open()) return;
        spdlog::warn("coordination service: accept failed: {}", ec.message());
        break;
      }
      on_accept(std::move(socket));
    }
    accept(acceptor);
  });
}

void CoordService::Impl::on_accept(asio::ip::tcp::socket socket) {
  if (sessions_.size() >= static_cast<size_t>(opts_.num_processes) + kSpareConnections) {
    spdlog::warn(
        "coordination service: refusing a connection: {} are open, more than the {} "
        "processes and {} spare connections it admits",
        sessions_.size(), opts_.num_processes, kSpareConnections);
    ++dropped_;
    return;  // the socket closes here
  }
  auto session = std::make_shared<Session>();
  session->conn = std::make_shared<FramedConnection>(std::move(socket));
  // Until it registers, a connection is a stranger: a registration's size at most.
  session->conn->set_max_frame_bytes(kMaxRegistrationFrameBytes);
  session->handshake_timer = std::make_unique<asio::steady_timer>(io_, opts_.handshake_timeout);
  session->handshake_timer->async_wait([this, weak = std::weak_ptr(session)](asio::error_code ec) {
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

void CoordService::Impl::drop(Session& session, const std::string& reason) {
  if (session.dropped) return;
  session.dropped = true;
  spdlog::warn("coordination service: dropping connection from {}: {}", session.conn->peer(),
               reason);
  ++dropped_;
  session.conn->close(reason);
}

void CoordService::Impl::send(Session& session, const wire::ServerMessage& msg) {
  session.conn->send(std::make_shared<const std::string>(encode_message_frame(msg)));
}

void CoordService::Impl::reply(Session& session, uint64_t request_id, const Status& status) {
  wire::ServerMessage msg;
  msg.set_request_id(request_id);
  msg.set_code(static_cast<wire::Code>(status.code));
  msg.set_message(status.message);
  send(session, msg);
}

void CoordService::Impl::reply_ok(Session& session, uint64_t request_id, wire::ServerMessage msg) {
  msg.set_request_id(request_id);
  send(session, msg);
}

void CoordService::Impl::on_message(const std::shared_ptr<Session>& session,
                                    std::string_view payload) {
  wire::ClientMessage msg;
  if (!msg.ParseFromArray(payload.data(), static_cast<int>(payload.size()))) {
    drop(*session, "undecodable message (not a ClientMessage)");
    return;
  }
  const int p = session->process_id;
  if (p < 0) {
    if (msg.body_case() == wire::ClientMessage::kStatus) {
      session->handshake_timer->cancel();
      return on_status_query(session, msg.request_id(), msg.status());
    }
    if (msg.body_case() != wire::ClientMessage::kRegistration) {
      drop(*session, "the first message was not a registration or a status query");
      return;
    }
    on_register(session, msg.request_id(), msg.registration());
    return;
  }
  Link& link = links_[p];
  if (link.session != session) return;  // a stale connection of a replaced registration
  link.last_heard = Clock::now();
  if (msg.body_case() == wire::ClientMessage::kActivity) return on_activity(p, msg.activity());
  if (msg.body_case() == wire::ClientMessage::kHeartbeat) {
    if (msg.heartbeat().has_activity()) on_activity(p, msg.heartbeat().activity());
    wire::ServerMessage ack;
    ack.mutable_heartbeat_ack();
    send(*session, ack);
    return;
  }
  if (!members_.formed()) {
    reply(*session, msg.request_id(),
          {StatusCode::kFailedPrecondition, "the cluster has not formed yet"});
    return;
  }
  if (members_.state(p) == MemberState::kDead) return;
  dispatch(session, msg);
}

void CoordService::Impl::dispatch(const std::shared_ptr<Session>& session,
                                  const wire::ClientMessage& msg) {
  const uint64_t id = msg.request_id();
  switch (msg.body_case()) {
    case wire::ClientMessage::kKvSet:
      return on_kv_set(*session, id, msg.kv_set());
    case wire::ClientMessage::kKvGet:
      return on_kv_get(session, id, msg.kv_get());
    case wire::ClientMessage::kKvDirGet:
      return on_kv_dir_get(*session, id, msg.kv_dir_get());
    case wire::ClientMessage::kKvDelete:
      return on_kv_delete(*session, id, msg.kv_delete());
    case wire::ClientMessage::kKvIncrement:
      return on_kv_increment(*session, id, msg.kv_increment());
    case wire::ClientMessage::kBarrier:
      return on_barrier(session, id, msg.barrier());
    case wire::ClientMessage::kLiveProcesses:
      return on_live_processes(*session, id);
    case wire::ClientMessage::kShutdown:
      return on_shutdown(session, id, msg.shutdown());
    case wire::ClientMessage::kStatus:
      return on_status_query(session, id, msg.status());
    case wire::ClientMessage::kRegistration:
      return reply(*session, id,
                   {StatusCode::kFailedPrecondition, "this connection is already registered"});
    default:
      drop(*session, "a message with no known body");
  }
}

void CoordService::Impl::on_close(const std::shared_ptr<Session>& session,
                                  const std::string& reason) {
  sessions_.erase(session);
  session->handshake_timer->cancel();
  const int p = session->process_id;
  if (p < 0) {
    // Bad frames are refused inside the connection; they count as drops like the rest.
    if (!stopping_ && reason != "connection closed by peer") drop(*session, reason);
    return;
  }
  if (links_[p].session != session) return;
  if (!members_.formed()) {
    spdlog::info(
        "coordination service: process {} (host {}, pid {}) disconnected before the cluster "
        "formed: {}",
        p, members_.info(p).hostname, members_.info(p).pid, reason);
    release_pending(p);
    return;
  }
  connection_gone();
  session->process_id = -1;
  if (stopping_) return;  // the service itself is going away; nobody failed
  if (members_.active(p)) declare_dead(p, "connection lost (" + reason + ")");
}

void CoordService::Impl::connection_gone() {
  std::lock_guard lock(mu_);
  --open_process_connections_;
  cv_.notify_all();
}

void CoordService::Impl::close_everything() {
  stopping_ = true;
  log_death_summary();
  asio::error_code ignored;
  for (auto& a : acceptors_) a.close(ignored);
  if (http_) http_->stop();
  heartbeat_timer_.cancel();
  leaver_timer_.cancel();
  barrier_deadlines_.clear();
  for (const auto& s : sessions_) s->conn->close("coordination service stopped");
}

CoordService::CoordService(ServiceOptions options)
    : impl_(std::make_unique<Impl>(std::move(options))) {}
CoordService::~CoordService() = default;
uint16_t CoordService::port() const { return impl_->port(); }
std::string CoordService::status_url() const { return impl_->status_url(); }
void CoordService::fail_registrations(const std::string& why) { impl_->fail_registrations(why); }
void CoordService::start() { impl_->start(); }
void CoordService::stop() { impl_->stop(); }
bool CoordService::wait_until_finished(std::chrono::milliseconds timeout) {
  return impl_->wait_until_finished(timeout);
}
bool CoordService::wait_until_disconnected(std::chrono::milliseconds timeout,
                                           int still_open) const {
  return impl_->wait_until_disconnected(timeout, still_open);
}
CoordService::Stats CoordService::stats() const { return impl_->stats(); }

}  // namespace spmd
