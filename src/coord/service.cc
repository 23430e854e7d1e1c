// The service's life cycle, its connections and the one dispatch of client messages.
#include <fmt/format.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/wire_format_lite.h>
#include <pthread.h>
#include <spdlog/spdlog.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <future>

#include "coord/listen.h"
#include "coord/service_impl.h"
#include "coord/status_query.h"
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

// The request_id (field 1) of a ClientMessage that did not parse (a string field that is not
// UTF-8, from a client that does not check its names), read from the wire format: 0 when it
// has none or the bytes are not wire format at all.
uint64_t request_id_of(std::string_view payload) {
  using google::protobuf::internal::WireFormatLite;
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(payload.data()),
                                            static_cast<int>(payload.size()));
  const uint32_t request_id_tag = WireFormatLite::MakeTag(1, WireFormatLite::WIRETYPE_VARINT);
  while (const uint32_t tag = in.ReadTag()) {
    if (tag == request_id_tag) {
      uint64_t id = 0;
      return in.ReadVarint64(&id) ? id : 0;
    }
    if (!WireFormatLite::SkipField(&in, tag)) return 0;
  }
  return 0;
}

// The status page's thread's nice value, above the service loop's (a lower priority).
constexpr int kPageNice = 10;
// How long the status page waits for the service's loop to copy the table.
constexpr std::chrono::seconds kPageTableWait(2);

// Connections accepted in one turn of the event loop (accept_burst()).
constexpr size_t kAcceptBurst = 64;
// Strangers that ended (dropped, or closed before they authenticated) between two bursts that
// make it a flood, and the wait before the next burst then.
constexpr uint64_t kFloodStrangers = 32;
constexpr std::chrono::milliseconds kFloodPause(25);

}  // namespace

CoordService::Impl::Impl(ServiceOptions options)
    : cx_(std::move(options)),
      requests_(cx_, live_view_),
      live_view_(cx_, requests_.barriers()),
      departures_(cx_, live_view_, requests_.barriers()),
      registrar_(cx_, departures_) {
  acceptors_ = listen_on(cx_.io, cx_.opts.bind_address, listener_count(cx_.opts.num_processes));
  for (auto& a : acceptors_) {
    a.non_blocking(true);
    pauses_.push_back(std::make_unique<asio::steady_timer>(cx_.io));
  }
  port_ = acceptors_.front().local_endpoint().port();
  if (!cx_.opts.status_http_address.empty()) {
    http_ =
        std::make_unique<StatusHttpServer>(http_io_, cx_.opts.status_http_address,
                                           cx_.opts.auth_token, [this] { return page_table(); });
  }
}

// On the page's thread: the table is copied on the service's loop, which owns it,
// LiveView::kRowsPerTurn rows per turn (O(N) in all, once a second at most), and made into JSON
// by the page's server, so that neither delays a heartbeat's answer by more than a turn.
std::optional<wire::StatusTable> CoordService::Impl::page_table() {
  auto table = std::make_shared<std::promise<wire::StatusTable>>();
  std::future<wire::StatusTable> copied = table->get_future();
  live_view_.status_table_in_turns(
      [table](wire::StatusTable t) { table->set_value(std::move(t)); });
  if (copied.wait_for(kPageTableWait) == std::future_status::ready) {
    try {
      return copied.get();
    } catch (const std::future_error&) {
      // The loop stopped before it ran the copy.
    }
  }
  return std::nullopt;
}

void CoordService::Impl::start() {
  for (size_t i = 0; i < acceptors_.size(); ++i) accept(i);
  thread_.start("spmd-coord", kEventLoopStackBytes, [this] { cx_.io.run(); });
  if (http_) {
    http_->start();
    http_thread_ = std::thread([this] {
      pthread_setname_np(pthread_self(), "spmd-status-web");
      // Below the service's loop: on busy cores, making the page waits for the heartbeats.
      setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), kPageNice);
      http_io_.run();
    });
  }
}

void CoordService::Impl::stop() {
  if (stopped_.exchange(true)) return;
  // The page first: it may be waiting for the loop's copy of the table (kPageTableWait at most).
  if (http_thread_.joinable()) {
    http_io_.stop();
    http_thread_.join();
  }
  if (thread_.joinable()) {
    asio::post(cx_.io, [this] { close_everything(); });
    // close_everything() lets queued answers go; the loop then stops by itself or here.
    asio::post(cx_.io, [this] { cx_.io.stop(); });
    thread_.join();
  }
}

CoordService::Stats CoordService::Impl::stats() const {
  Stats out;
  out.dropped_connections = cx_.dropped.load();
  out.barrier_arrivals = cx_.barrier_arrivals.load();
  out.shutdown_arrivals = cx_.shutdown_arrivals.load();
  out.deaths = cx_.deaths.load();
  return out;
}

// Accepts the connections waiting in the kernel's queue a burst at a time, before any of their
// messages is read: when thousands of processes connect at once, the queue (at most somaxconn,
// 4096 on Debian) overflows if it is drained one connection per turn of the loop between
// thousands of registrations, and each dropped SYN costs its process a 1-3-7 s retransmission.
// Between bursts the loop reads what the last one's connections sent, so a process's
// registration is read before a flood's newer connections can push it out of the strangers'
// room. When strangers come and go faster than kFloodStrangers a burst, that is a flood: the next
// burst waits kFloodPause, so that the kernel holds the flood in its queue, and once that is full
// turns it away, instead of the service spending the CPU it shares with the job on accepting and
// closing each connection. Processes queued behind the flood get in a burst at a time.
void CoordService::Impl::accept(size_t listener) {
  acceptors_[listener].async_wait(
      asio::ip::tcp::acceptor::wait_read, [this, listener](asio::error_code ec) {
        if (!ec) return accept_burst(listener);
        if (ec != asio::error::operation_aborted && acceptors_[listener].is_open()) {
          spdlog::warn("coordination service: waiting for connections failed: {}", ec.message());
          accept(listener);
        }
      });
}

void CoordService::Impl::accept_burst(size_t listener) {
  asio::ip::tcp::acceptor& acceptor = acceptors_[listener];
  if (!acceptor.is_open()) return;
  // Strangers' closes run as handlers of their own, after the burst that caused them: counted
  // from one burst to the next.
  const bool flood = strangers_ended_ - ended_at_last_burst_ >= kFloodStrangers;
  ended_at_last_burst_ = strangers_ended_;
  for (size_t n = 0; n < kAcceptBurst; ++n) {
    asio::ip::tcp::socket socket(cx_.io);
    asio::error_code ec;
    acceptor.accept(socket, ec);
    if (ec == asio::error::would_block || ec == asio::error::try_again) return accept(listener);
    if (ec) {
      // Out of descriptors or the like: logged, and tried again at the next wake-up.
      if (!acceptor.is_open()) return;
      spdlog::warn("coordination service: accept failed: {}", ec.message());
      return accept(listener);
    }
    on_accept(std::move(socket));
  }
  if (!flood) {
    asio::post(cx_.io, [this, listener] { accept_burst(listener); });
    return;
  }
  asio::steady_timer& pause = *pauses_[listener];
  pause.expires_after(kFloodPause);
  pause.async_wait([this, listener](asio::error_code ec) {
    if (!ec) accept_burst(listener);
  });
}

void CoordService::Impl::on_accept(asio::ip::tcp::socket socket) {
  auto session = std::make_shared<ServiceSession>();
  session->conn = std::make_shared<FramedConnection>(std::move(socket));
  // Until it registers, a connection is a stranger: a registration's size at most.
  session->conn->set_max_frame_bytes(kMaxRegistrationFrameBytes);
  session->handshake_timer =
      std::make_unique<asio::steady_timer>(cx_.io, cx_.opts.handshake_timeout);
  session->handshake_timer->async_wait([this, weak = std::weak_ptr(session)](asio::error_code ec) {
    auto s = weak.lock();
    if (ec || !s || s->process_id >= 0) return;
    cx_.drop(*s, fmt::format("no registration within {} ms of connecting",
                             cx_.opts.handshake_timeout.count()));
  });
  sessions_.insert(session);
  make_room(session);
  std::weak_ptr<ServiceSession> weak = session;
  session->conn->start(
      [this, weak](std::string_view payload) {
        if (auto s = weak.lock()) on_message(s, payload);
      },
      [this, weak](const std::string& reason) {
        if (auto s = weak.lock()) on_close(s, reason);
      });
}

// Strangers beyond their room (admission.h) are dropped oldest first, the newest taking their
// place: whoever holds idle connections, or opens them faster than they are closed, cannot keep
// a process of the job from being read.
void CoordService::Impl::make_room(const SessionPtr& session) {
  const auto unregistered = static_cast<size_t>(cx_.members.unregistered_count());
  for (const SessionPtr& oldest : cx_.admission.admit(session, unregistered)) {
    cx_.drop(*oldest,
             fmt::format("the oldest connection waiting to authenticate, dropped to admit a newer "
                         "one: more than {} waited (one per process yet to register and {} more)",
                         unregistered + Admission::kSpareStrangers, Admission::kSpareStrangers));
  }
}

void CoordService::Impl::on_message(const SessionPtr& session, std::string_view payload) {
  wire::ClientMessage msg;
  if (!msg.ParseFromArray(payload.data(), static_cast<int>(payload.size()))) {
    if (session->process_id < 0) {
      cx_.drop(*session, "undecodable message (not a ClientMessage)");
    } else {
      on_undecodable(*session, payload);
    }
    return;
  }
  const int p = session->process_id;
  if (p < 0) {
    if (msg.body_case() == wire::ClientMessage::kStatus) {
      session->handshake_timer->cancel();
      return live_view_.on_status_query(session, msg.request_id(), msg.status());
    }
    if (msg.body_case() != wire::ClientMessage::kRegistration) {
      cx_.drop(*session, "the first message was not a registration or a status query");
      return;
    }
    registrar_.on_register(session, msg.request_id(), msg.registration());
    return;
  }
  ServiceContext::Link& link = cx_.links[p];
  if (link.session != session) return;  // a stale connection of a replaced registration
  link.last_heard = ServiceContext::Clock::now();
  if (msg.body_case() == wire::ClientMessage::kActivity)
    return live_view_.on_activity(p, msg.activity());
  if (msg.body_case() == wire::ClientMessage::kHeartbeat) {
    if (msg.heartbeat().has_activity()) live_view_.on_activity(p, msg.heartbeat().activity());
    wire::ServerMessage ack;
    ack.mutable_heartbeat_ack();
    cx_.send(*session, ack);
    return;
  }
  if (!cx_.members.formed()) {
    cx_.reply(*session, msg.request_id(),
              {StatusCode::kFailedPrecondition, "the cluster has not formed yet"});
    return;
  }
  if (cx_.members.state(p) == MemberState::kDead) return;
  dispatch(session, msg);
}

void CoordService::Impl::on_undecodable(ServiceSession& session, std::string_view payload) {
  // A member stays a member whatever one request holds: the request is answered with an error
  // (its caller raises it), or ignored when it has no id to answer (an activity report).
  const uint64_t id = request_id_of(payload);
  spdlog::warn("coordination service: process {} sent a request it could not decode ({} bytes{})",
               session.process_id, payload.size(), id == 0 ? ", ignored" : "");
  if (id == 0) return;
  cx_.reply(session, id,
            {StatusCode::kInvalidArgument,
             "the coordination service could not decode this request (a key, barrier or name "
             "that is not UTF-8 text?), so it was not carried out"});
}

void CoordService::Impl::dispatch(const SessionPtr& session, const wire::ClientMessage& msg) {
  const uint64_t id = msg.request_id();
  switch (msg.body_case()) {
    case wire::ClientMessage::kKvSet:
      return requests_.on_kv_set(*session, id, msg.kv_set());
    case wire::ClientMessage::kKvGet:
      return requests_.on_kv_get(session, id, msg.kv_get());
    case wire::ClientMessage::kKvDirGet:
      return requests_.on_kv_dir_get(*session, id, msg.kv_dir_get());
    case wire::ClientMessage::kKvDelete:
      return requests_.on_kv_delete(*session, id, msg.kv_delete());
    case wire::ClientMessage::kKvIncrement:
      return requests_.on_kv_increment(*session, id, msg.kv_increment());
    case wire::ClientMessage::kBarrier:
      return requests_.on_barrier(session, id, msg.barrier());
    case wire::ClientMessage::kLiveProcesses:
      return requests_.on_live_processes(*session, id);
    case wire::ClientMessage::kShutdown:
      return departures_.on_shutdown(session, id, msg.shutdown());
    case wire::ClientMessage::kStatus:
      return live_view_.on_status_query(session, id, msg.status());
    case wire::ClientMessage::kRegistration:
      return cx_.reply(*session, id,
                       {StatusCode::kFailedPrecondition, "this connection is already registered"});
    default:
      cx_.drop(*session, "a message with no known body");
  }
}

void CoordService::Impl::on_close(const SessionPtr& session, const std::string& reason) {
  sessions_.erase(session);
  if (session->process_id < 0 && !session->tool) ++strangers_ended_;
  cx_.admission.closed(*session);
  session->handshake_timer->cancel();
  const int p = session->process_id;
  if (p < 0) {
    // Bad frames are refused inside the connection; they count as drops like the rest.
    if (!cx_.stopping && reason != "connection closed by peer") cx_.drop(*session, reason);
    return;
  }
  if (cx_.links[p].session != session) return;
  if (!cx_.members.formed()) {
    spdlog::info(
        "coordination service: process {} (host {}, pid {}) disconnected before the cluster "
        "formed: {}",
        p, cx_.members.info(p).hostname, cx_.members.info(p).pid, reason);
    registrar_.release_pending(p);
    return;
  }
  cx_.connection_gone();
  session->process_id = -1;
  if (cx_.stopping) return;  // the service itself is going away; nobody failed
  if (cx_.members.active(p)) departures_.declare_dead(p, "connection lost (" + reason + ")");
}

void CoordService::Impl::close_everything() {
  cx_.stopping = true;
  departures_.stop();
  asio::error_code ignored;
  for (auto& a : acceptors_) a.close(ignored);
  for (auto& p : pauses_) p->cancel();
  requests_.stop();
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
