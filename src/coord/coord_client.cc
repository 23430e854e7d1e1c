#include "coord/coord_client.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <future>

#include "coord/address.h"
#include "coord/process_set.h"
#include "coord/topology_codec.h"
#include "spmd/error.h"

namespace spmd {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using tcp = asio::ip::tcp;

namespace {

// Between connection attempts while process 0 is not listening yet.
constexpr milliseconds kFirstRetryDelay(50);
constexpr milliseconds kMaxRetryDelay(1000);
// Refusals in a row, after the service closed a registration, that mean it has stopped (with the
// retries' backoff, about a second).
constexpr int kRefusalsMeaningGone = 5;
// One connection attempt may take this long before it is abandoned and retried.
constexpr milliseconds kConnectAttemptTimeout(3000);
// How long past its own deadline a blocking call waits for the service's answer. A live service
// always answers by its deadline; a dead one is detected by heartbeats within heartbeat_timeout.
constexpr milliseconds kAnswerMargin(5000);

milliseconds remaining(Clock::time_point deadline) {
  return std::max(milliseconds(0),
                  std::chrono::duration_cast<milliseconds>(deadline - Clock::now()));
}

}  // namespace

std::shared_ptr<CoordClient> CoordClient::create(asio::io_context& io, ClientConfig config) {
  return std::make_shared<CoordClient>(io, std::move(config));
}

CoordClient::CoordClient(asio::io_context& io, ClientConfig config)
    : io_(io),
      strand_(asio::make_strand(io)),
      config_(std::move(config)),
      address_(config_.address),
      retry_timer_(strand_),
      beats_(strand_, *this, *activity_, config_.heartbeat_timeout, config_.num_processes) {}

void CoordClient::send(const wire::ClientMessage& msg) {
  if (conn_) conn_->send(std::make_shared<const std::string>(encode_message_frame(msg)));
}

wire::ServerMessage CoordClient::error_answer(const Status& status) {
  wire::ServerMessage msg;
  msg.set_code(static_cast<wire::Code>(status.code));
  msg.set_message(status.message);
  return msg;
}

std::string CoordClient::local_address() const {
  std::lock_guard lock(reason_mu_);
  return local_address_;
}

std::string CoordClient::abort_reason() const {
  std::lock_guard lock(reason_mu_);
  return abort_reason_;
}

void CoordClient::async_start(StartCallback done) {
  asio::dispatch(strand_, [self = shared_from_this(), done = std::move(done)]() mutable {
    self->start_done_ = std::move(done);
    self->start_deadline_ = Clock::now() + self->config_.initialization_timeout;
    self->resolver_ = std::make_unique<tcp::resolver>(self->strand_);
    self->try_connect(self->start_deadline_, "none yet");
  });
}

void CoordClient::try_connect(Clock::time_point deadline, const std::string& last_error) {
  if (closing_ || !start_done_) return;
  if (Clock::now() >= deadline) {
    finish_start({StatusCode::kDeadlineExceeded, unreachable(last_error)}, {});
    return;
  }
  auto retry = [this, deadline](const std::string& error) { retry_connect(deadline, error); };
  HostPort hp;
  try {
    hp = parse_host_port(address_, "coordinator_address");
  } catch (const Error& e) {
    finish_start({StatusCode::kInvalidArgument, e.what()}, {});
    return;
  }
  resolver_->async_resolve(
      hp.host, std::to_string(hp.port),
      [self = shared_from_this(), deadline, retry](asio::error_code ec,
                                                   const tcp::resolver::results_type& results) {
        if (self->closing_) return;
        if (ec) return retry("cannot resolve the host: " + ec.message());
        self->connecting_ = std::make_unique<tcp::socket>(self->strand_);
        auto attempt_timer = std::make_shared<asio::steady_timer>(
            self->strand_, std::min(kConnectAttemptTimeout, remaining(deadline)));
        attempt_timer->async_wait([self](asio::error_code ec) {
          asio::error_code ignored;
          if (!ec && self->connecting_) self->connecting_->close(ignored);
        });
        asio::async_connect(
            *self->connecting_, results,
            [self, retry, attempt_timer](asio::error_code ec, const tcp::endpoint&) {
              attempt_timer->cancel();
              if (self->closing_) return;
              // The attempt timer closed the socket: nothing answered, not even a refusal.
              if (ec == asio::error::operation_aborted) {
                return retry(
                    "no answer to the connection attempt (the host may be down or cut "
                    "off)");
              }
              // Refusals right after the service closed this process's registration: it has
              // stopped, unless they stop first (on one host, a flood of connections that end
              // unaccepted can get a new one refused now and then).
              if (ec == asio::error::connection_refused && self->registration_closes_ > 0 &&
                  ++self->refusals_since_close_ >= kRefusalsMeaningGone) {
                return self->finish_start({StatusCode::kDeadlineExceeded, self->service_gone()},
                                          {});
              }
              if (ec != asio::error::connection_refused) self->refusals_since_close_ = 0;
              if (ec) return retry(ec.message());
              self->on_connected(std::move(*self->connecting_));
            });
      });
}

void CoordClient::retry_connect(Clock::time_point deadline, const std::string& error) {
  const milliseconds elapsed = config_.initialization_timeout - remaining(deadline);
  const milliseconds delay =
      std::min({kMaxRetryDelay, std::max(kFirstRetryDelay, elapsed / 4), remaining(deadline)});
  retry_timer_.expires_after(delay);
  retry_timer_.async_wait([self = shared_from_this(), deadline, error](asio::error_code ec) {
    if (!ec) self->try_connect(deadline, error);
  });
}

std::string CoordClient::unreachable(const std::string& last_error) const {
  if (registration_closes_ > 0) {
    return fmt::format(
        "process {} could not register with the coordination service at {} within {} ms: the "
        "service closed its connection {} time{} before reading its registration (the last: "
        "{}). The service drops the oldest connection that has not yet authenticated when more "
        "wait than it has room for, so something other than this job's processes is likely "
        "holding or opening connections to its port; the service's log (process 0's, or "
        "spmd-coordinator's) names their addresses. Serve the job's network only "
        "(coordinator_bind_address), or close the port to other hosts",
        config_.process_id, address_, config_.initialization_timeout.count(), registration_closes_,
        registration_closes_ == 1 ? "" : "s", last_error);
  }
  return fmt::format(
      "process {} could not reach the coordination service at {} within {} ms (last error: {}). "
      "Check that process 0 (or spmd-coordinator) is running, and that the address and port are "
      "reachable from this host",
      config_.process_id, address_, config_.initialization_timeout.count(), last_error);
}

std::string CoordClient::service_gone() const {
  return fmt::format(
      "the coordination service at {} closed process {}'s connection during registration ({}), "
      "and now refuses connections: {}",
      address_, config_.process_id, last_close_reason_,
      config_.service_in_process_0 ? "process 0, which hosts it, has stopped"
                                   : "the coordination service has stopped");
}

void CoordClient::on_connected(tcp::socket socket) {
  {
    std::error_code ec;
    const auto local = socket.local_endpoint(ec);
    std::lock_guard lock(reason_mu_);
    if (!ec) local_address_ = local.address().to_string();
  }
  conn_ = std::make_shared<FramedConnection>(std::move(socket));
  std::weak_ptr<CoordClient> weak = shared_from_this();
  conn_->start(
      [weak](std::string_view payload) {
        if (auto self = weak.lock()) self->on_message(payload);
      },
      [weak](const std::string& reason) {
        if (auto self = weak.lock()) self->on_close(reason);
      });
  beats_.heard();
  wire::ClientMessage msg;
  msg.set_request_id(kRegistrationRequestId);
  auto* reg = msg.mutable_registration();
  reg->set_process_id(config_.process_id);
  reg->set_num_processes(config_.num_processes);
  reg->set_auth_token(config_.auth_token);
  reg->set_host_id(config_.host_id);
  reg->set_hostname(config_.hostname);
  reg->set_pid(config_.pid);
  for (const auto& d : config_.devices) *reg->add_devices() = d;
  // The service holds the registration open for what is left of initialization_timeout.
  reg->set_timeout_ms(std::max<int64_t>(1, remaining(start_deadline_).count()));
  if (msg.ByteSizeLong() > kMaxRegistrationFrameBytes) {
    return finish_start(
        {StatusCode::kInvalidArgument,
         fmt::format("process {}'s registration is {} bytes, more than the {} the coordination "
                     "service accepts from a process not yet registered: shorten the auth token "
                     "({} bytes) or the host id ({} bytes), or use fewer local devices ({})",
                     config_.process_id, msg.ByteSizeLong(), kMaxRegistrationFrameBytes,
                     config_.auth_token.size(), config_.host_id.size(), config_.devices.size())},
        {});
  }
  conn_->send(std::make_shared<const std::string>(encode_message_frame(msg)));
  // A service that accepted the connection but never answers must not hold this process.
  retry_timer_.expires_after(remaining(start_deadline_) + kAnswerMargin);
  retry_timer_.async_wait([self = shared_from_this()](asio::error_code ec) {
    if (ec || self->formed_) return;
    self->finish_start(
        {StatusCode::kDeadlineExceeded,
         fmt::format("the coordination service at {} accepted process {}'s connection but did "
                     "not complete its registration in time{}",
                     self->address_, self->config_.process_id,
                     self->config_.service_in_process_0
                         ? ": process 0, which hosts it, or its host may have stopped or been cut "
                           "off"
                         : "")},
        {});
  });
}

void CoordClient::finish_start(const Status& status, wire::Topology topology) {
  if (!start_done_) return;
  auto done = std::move(start_done_);
  start_done_ = nullptr;
  retry_timer_.cancel();
  if (!status.ok()) {
    closing_ = true;
    if (conn_) conn_->close("registration failed");
  }
  done(status, std::move(topology));
}

bool CoordClient::has_left(int process) const {
  std::lock_guard lock(leaving_mu_);
  return leaving_.count(process) != 0;
}

void CoordClient::note_leavers(const wire::PeerLeaving& notice) {
  auto decoded = decode_process_set(notice.processes(), config_.num_processes);
  if (auto* err = std::get_if<std::string>(&decoded)) {
    spdlog::error("coordination client: ignoring a malformed leaving notice from {}: {}", address_,
                  *err);
    return;
  }
  const auto& ids = std::get<std::vector<int>>(decoded);
  {
    std::lock_guard lock(leaving_mu_);
    leaving_.insert(ids.begin(), ids.end());
  }
  leaving_count_.fetch_add(ids.size(), std::memory_order_release);
}

void CoordClient::on_message(std::string_view payload) {
  wire::ServerMessage msg;
  if (!msg.ParseFromArray(payload.data(), static_cast<int>(payload.size()))) {
    spdlog::error("coordination client: undecodable message from the service at {}", address_);
    conn_->close("undecodable message from the coordination service");
    return;
  }
  beats_.heard();
  switch (msg.body_case()) {
    case wire::ServerMessage::kPeerFailed: {
      const auto& pf = msg.peer_failed();
      abort({pf.process_id(), pf.hostname(), pf.pid(), pf.reason()});
      return;
    }
    case wire::ServerMessage::kPeerLeaving:
      note_leavers(msg.peer_leaving());
      return;
    case wire::ServerMessage::kHeartbeatAck:
      return;
    default:
      break;
  }
  if (!formed_ && msg.request_id() == kRegistrationRequestId) {
    on_registered(msg);
    return;
  }
  if (shutdown_request_id_ != 0 && msg.request_id() == shutdown_request_id_) {
    closing_ = true;
    beats_.stop();
  }
  auto it = pending_.find(msg.request_id());
  if (it == pending_.end()) return;  // answered already (e.g. failed on abort)
  auto done = std::move(it->second);
  pending_.erase(it);
  done(msg);
}

void CoordClient::on_registered(const wire::ServerMessage& msg) {
  Status status = status_of(msg);
  wire::Topology topology;
  if (status.ok() && config_.decode_topology) {
    auto unpacked = unpack_topology(msg);
    if (auto* err = std::get_if<std::string>(&unpacked)) {
      status = {StatusCode::kInternal,
                fmt::format("the coordination service at {} sent a malformed topology: {}",
                            address_, *err)};
    } else {
      topology = std::move(std::get<wire::Topology>(unpacked));
    }
  }
  if (status.ok()) {
    formed_ = true;
    if (topology.host_index_size() > 0 && topology.pid_size() > 0 && topology.host_index(0) >= 0 &&
        topology.host_index(0) < topology.hosts_size()) {
      process0_host_ = topology.hosts(topology.host_index(0)).hostname();
      process0_pid_ = topology.pid(0);
    }
    milliseconds interval = heartbeat_interval(config_.heartbeat_timeout);
    // The service's timeout rules: beat at least as often as it asks.
    if (msg.heartbeat_interval_ms() > 0) {
      interval = std::min(interval, milliseconds(msg.heartbeat_interval_ms()));
    }
    beats_.start(interval);
  }
  finish_start(status, std::move(topology));
}

void CoordClient::on_close(const std::string& reason) {
  if (closing_) {
    fail_pending({StatusCode::kFailedPrecondition, "the coordination client was closed"});
    return;
  }
  if (!formed_) {
    // Closed before the registration was answered: the service may have dropped it to make room
    // (admission.h), so connect again; a service that has stopped refuses that at once.
    if (!start_done_) return;
    ++registration_closes_;
    last_close_reason_ = reason;
    conn_.reset();
    retry_timer_.cancel();
    retry_connect(start_deadline_, reason);
    return;
  }
  service_lost("lost the connection to the coordination service (" + reason + ")");
}

void CoordClient::service_lost(const std::string& reason) {
  if (config_.service_in_process_0 && !process0_host_.empty() && config_.process_id != 0) {
    abort({0, process0_host_, process0_pid_, reason + " at " + address_ + ", which it hosted"});
    return;
  }
  abort({-1, address_, 0, reason});
}

wire::StatusTable CoordClient::status_table(milliseconds timeout) const {
  auto answer = std::make_shared<std::promise<wire::ServerMessage>>();
  std::future<wire::ServerMessage> future = answer->get_future();
  wire::ClientMessage msg;
  msg.mutable_status();
  // async_call is thread-safe and the query leaves this client as it was.
  const_cast<CoordClient*>(this)->async_call(
      std::move(msg), [answer](const wire::ServerMessage& m) { answer->set_value(m); });
  if (future.wait_for(timeout) != std::future_status::ready) {
    throw DeadlineExceeded(
        fmt::format("the coordination service at {} did not answer a status "
                    "query within {} ms",
                    address_, timeout.count()));
  }
  const wire::ServerMessage m = future.get();
  if (const Status s = status_of(m); !s.ok()) throw_status(s);
  return m.status_table();
}

std::string FailureReport::to_string() const {
  if (process_id < 0) return fmt::format("coordination service at {}: {}", host, reason);
  return fmt::format("process {} (host {}, pid {}) failed: {}", process_id, host, pid, reason);
}

void CoordClient::abort(const FailureReport& info) {
  // Runs on the strand, so once. The reason is stored before the flag is raised: a thread that
  // sees aborted() (the collectives poll it without the strand) must find the reason too.
  if (aborted_.load()) return;
  const std::string reason = info.to_string();
  {
    std::lock_guard lock(reason_mu_);
    abort_reason_ = reason;
  }
  aborted_.store(true);
  fail_pending({StatusCode::kPeerFailure, reason});
  if (config_.on_failure) config_.on_failure(info);
}

void CoordClient::fail_pending(const Status& status) {
  auto pending = std::move(pending_);
  pending_.clear();
  const wire::ServerMessage answer = error_answer(status);
  for (auto& [id, done] : pending) done(answer);
}

void CoordClient::async_call(wire::ClientMessage msg, Callback done) {
  asio::dispatch(
      strand_, [self = shared_from_this(), msg = std::move(msg), done = std::move(done)]() mutable {
        if (self->aborted_) {
          return done(error_answer({StatusCode::kPeerFailure, self->abort_reason()}));
        }
        if (self->closing_ || !self->formed_ || !self->conn_) {
          return done(error_answer({StatusCode::kFailedPrecondition,
                                    "the coordination client is not connected (call "
                                    "spmd::distributed::initialize() first)"}));
        }
        const uint64_t id = self->next_request_id_++;
        msg.set_request_id(id);
        if (msg.body_case() == wire::ClientMessage::kShutdown) self->shutdown_request_id_ = id;
        self->pending_.emplace(id, std::move(done));
        self->conn_->send(std::make_shared<const std::string>(encode_message_frame(msg)));
      });
}

wire::Topology CoordClient::start() {
  auto promise = std::make_shared<std::promise<std::pair<Status, wire::Topology>>>();
  auto future = promise->get_future();
  async_start([promise](const Status& status, wire::Topology topology) {
    promise->set_value({status, std::move(topology)});
  });
  if (future.wait_for(config_.initialization_timeout + 2 * kAnswerMargin) !=
      std::future_status::ready) {
    close();
    throw DeadlineExceeded(
        fmt::format("process {} did not finish registering with the coordination service at {}",
                    config_.process_id, address_));
  }
  auto [status, topology] = future.get();
  if (!status.ok()) throw_status(status);
  return topology;
}

wire::ServerMessage CoordClient::call(wire::ClientMessage msg, milliseconds server_wait) {
  auto promise = std::make_shared<std::promise<wire::ServerMessage>>();
  auto future = promise->get_future();
  async_call(std::move(msg),
             [promise](const wire::ServerMessage& answer) { promise->set_value(answer); });
  const milliseconds wait = server_wait + config_.heartbeat_timeout + kAnswerMargin;
  if (future.wait_for(wait) != std::future_status::ready) {
    throw DeadlineExceeded(fmt::format("no answer from the coordination service at {} within {} ms",
                                       address_, wait.count()));
  }
  wire::ServerMessage answer = future.get();
  const Status status = status_of(answer);
  if (!status.ok()) throw_status(status);
  return answer;
}

void CoordClient::shutdown(milliseconds timeout) {
  wire::ClientMessage msg;
  msg.mutable_shutdown()->set_timeout_ms(timeout.count());
  std::optional<Status> failure;
  try {
    call(std::move(msg), timeout);
  } catch (const Error& e) {
    failure = Status{StatusCode::kDeadlineExceeded, e.what()};
    if (dynamic_cast<const PeerFailure*>(&e)) failure->code = StatusCode::kPeerFailure;
    if (dynamic_cast<const FailedPrecondition*>(&e))
      failure->code = StatusCode::kFailedPrecondition;
  }
  close();
  if (failure) throw_status(*failure);
}

void CoordClient::interrupt(const std::string& reason) {
  asio::dispatch(strand_, [self = shared_from_this(), reason] {
    if (!self->aborted_.load()) {
      {
        std::lock_guard lock(self->reason_mu_);
        self->abort_reason_ =
            fmt::format("process {} was interrupted: {}", self->config_.process_id, reason);
      }
      self->aborted_.store(true);
      self->fail_pending({StatusCode::kPeerFailure, self->abort_reason()});
    }
  });
  close();
}

void CoordClient::close() {
  auto done = std::make_shared<std::promise<void>>();
  auto future = done->get_future();
  asio::dispatch(strand_, [self = shared_from_this(), done] {
    self->closing_ = true;
    self->retry_timer_.cancel();
    self->beats_.stop();
    if (self->resolver_) self->resolver_->cancel();
    asio::error_code ignored;
    if (self->connecting_) self->connecting_->close(ignored);
    if (self->conn_) self->conn_->close("client closed");
    self->fail_pending({StatusCode::kFailedPrecondition, "the coordination client was closed"});
    if (self->start_done_) {
      auto start_done = std::move(self->start_done_);
      self->start_done_ = nullptr;
      start_done({StatusCode::kFailedPrecondition, "the coordination client was closed"}, {});
    }
    done->set_value();
  });
  // From the strand itself dispatch ran inline; from elsewhere give the loop a moment.
  future.wait_for(std::chrono::seconds(2));
}

}  // namespace spmd
