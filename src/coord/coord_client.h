// The client of the coordination service: one connection per process, asynchronous at its core
// (so one thread can drive thousands of clients in spmd-bench) with blocking calls on top.
//
// Thread-safe: every call may come from any thread; state lives on a strand of the io_context
// the client was given, which some thread must run. No blocking call waits without a deadline,
// and every pending or later call fails with PeerFailure once the service reports a dead peer
// or the service itself dies.
// Open to tools/: spmd-bench's simulated clients are real coordination clients.
#pragma once

#include <asio.hpp>
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "coord/activity.h"
#include "coord/client_heartbeats.h"
#include "coord/connection.h"
#include "coord/status.h"
#include "coord/wire.h"
namespace spmd {

// What the service reports about a dead process, or what a client concludes about the service
// itself (process_id -1). The runtime hands it to users as distributed::PeerFailureInfo.
struct FailureReport {
  int process_id = -1;
  std::string host;  // the dead process's hostname, or the service's address
  int64_t pid = 0;
  std::string reason;  // e.g. "connection lost", "no heartbeat for 2000 ms"
  // "process 2 (host h1, pid 4242) failed: connection lost", or
  // "coordination service at h:1234: …" for the service.
  std::string to_string() const;
};

struct ClientConfig {
  std::string address;  // "host:port" of the service
  int process_id = 0;
  int num_processes = 1;
  std::string auth_token;
  std::string host_id;
  std::string hostname;
  int64_t pid = 0;
  std::vector<wire::DeviceInfo> devices;
  std::chrono::milliseconds initialization_timeout = std::chrono::seconds(300);
  // A service silent this long is dead. Heartbeats go out every tenth of this (10 ms … 10 s),
  // or more often when the service's own timeout asks for it.
  std::chrono::milliseconds heartbeat_timeout = std::chrono::seconds(100);
  // The service runs inside process 0 (not in spmd-coordinator): its death is process 0's, and
  // is reported naming process 0's host and pid.
  bool service_in_process_0 = false;
  // Whether start() decodes the topology the service sends (it always checks the answer's
  // status). spmd-bench's simulated cluster turns this off for all but a few of its thousands
  // of clients in one process: each real process decodes its own copy, in parallel with the
  // others, and a simulation that decoded N copies on two cores would time itself, not the
  // service. With it off, start() hands an empty topology.
  bool decode_topology = true;
  // Runs on the client's strand, once, when a peer or the service dies. Must not block.
  std::function<void(const FailureReport&)> on_failure;
};

class CoordClient : public std::enable_shared_from_this<CoordClient>, private HeartbeatHost {
 public:
  using Callback = std::function<void(const wire::ServerMessage&)>;
  using StartCallback = std::function<void(const Status&, wire::Topology)>;

  static std::shared_ptr<CoordClient> create(asio::io_context& io, ClientConfig config);

  // Connects (retrying until initialization_timeout) and registers; `done` runs once with the
  // topology when every process has registered, or with the error. A connection closed before
  // the registration is answered is made again (the service may have dropped it to make room
  // among strangers), unless the service then refuses connections five times in a row: it
  // stopped, which fails within about a second rather than at the deadline.
  void async_start(StartCallback done);

  // Sends one request (request_id is assigned here); `done` runs once with the answer, or with
  // a synthesized error answer when the connection fails or the cluster is aborted.
  void async_call(wire::ClientMessage msg, Callback done);

  // Blocking forms. start() throws like initialize() documents; call() throws the answer's error
  // and DeadlineExceeded when no answer comes within `server_wait` plus a margin.
  wire::Topology start();
  wire::ServerMessage call(wire::ClientMessage msg, std::chrono::milliseconds server_wait);

  // Waits at the shutdown barrier, then disconnects. Throws the barrier's error after
  // disconnecting.
  void shutdown(std::chrono::milliseconds timeout);

  // Disconnects without any barrier; pending calls fail. Idempotent.
  void close();

  // A local failure (distributed::interrupt): aborted() becomes true with `reason`, pending and
  // later calls fail with it, and the connection closes so that the service announces this
  // process's failure to the others. on_failure is not called: the failure is this process's.
  void interrupt(const std::string& reason);

  // Set once a peer or the service died; the reason is FailureReport::to_string(). (Also what
  // the heartbeats ask: HeartbeatHost.)
  bool aborted() const override { return aborted_.load(); }
  // How many other processes the service has announced as having called shutdown() (its
  // peer_leaving notices): a cheap check for waits that poll; then has_left(p) says whether
  // process p is one of them.
  uint64_t leaving_count() const { return leaving_count_.load(std::memory_order_relaxed); }
  bool has_left(int process) const;
  std::string abort_reason() const;

  // The local IP address of the connection to the service (empty before it connects): an
  // address of this host that the service's network reaches, where the data plane listens.
  std::string local_address() const;

  const ClientConfig& config() const { return config_; }

  // What this process is doing, for the service's live view: waits report here, and the client
  // sends each change at once and the current state with every heartbeat. Thread-safe.
  ActivityTracker& activity() const { return *activity_; }

  // The service's live view of every process (status_board.h). Throws the service's error, or
  // DeadlineExceeded when no answer comes within `timeout`. Thread-safe; changes nothing here.
  wire::StatusTable status_table(std::chrono::milliseconds timeout) const;

  CoordClient(asio::io_context& io, ClientConfig config);  // use create()

 private:
  void try_connect(std::chrono::steady_clock::time_point deadline, const std::string& last_error);
  // Tries again after a delay that grows with the time spent (50 ms … 1 s).
  void retry_connect(std::chrono::steady_clock::time_point deadline, const std::string& error);
  // Why start() failed: the deadline passed (unreachable) or the service went away.
  std::string unreachable(const std::string& last_error) const;
  std::string service_gone() const;
  void on_connected(asio::ip::tcp::socket socket);
  void on_message(std::string_view payload);
  void on_close(const std::string& reason);
  void note_leavers(const wire::PeerLeaving& notice);
  void on_registered(const wire::ServerMessage& msg);
  void finish_start(const Status& status, wire::Topology topology);
  // HeartbeatHost: what the heartbeats (client_heartbeats.h) ask of the client, on the strand.
  bool closing() const override { return closing_; }
  void send(const wire::ClientMessage& msg) override;
  void service_silent(const std::string& reason) override { service_lost(reason); }
  std::shared_ptr<void> keep_alive() override { return shared_from_this(); }
  void abort(const FailureReport& info);
  // Reports the service's death: as process 0's when it hosted the service.
  void service_lost(const std::string& reason);
  void fail_pending(const Status& status);
  static wire::ServerMessage error_answer(const Status& status);

  asio::io_context& io_;
  asio::strand<asio::io_context::executor_type> strand_;
  ClientConfig config_;
  std::string address_;  // config_.address, for messages

  // Strand state.
  std::shared_ptr<FramedConnection> conn_;
  asio::steady_timer retry_timer_;
  std::unique_ptr<asio::ip::tcp::resolver> resolver_;
  std::unique_ptr<asio::ip::tcp::socket> connecting_;
  StartCallback start_done_;
  std::chrono::steady_clock::time_point start_deadline_;
  std::unordered_map<uint64_t, Callback> pending_;
  uint64_t next_request_id_ = kRegistrationRequestId + 1;
  bool formed_ = false;
  // Connections the service closed before answering the registration, and the last reason.
  int registration_closes_ = 0;
  int refusals_since_close_ = 0;  // connection attempts refused in a row since the last close
  std::string last_close_reason_;
  // The request id of this process's shutdown barrier, once sent: when its answer arrives the
  // process is leaving, and the service closing the connection is no longer a failure.
  uint64_t shutdown_request_id_ = 0;
  std::string process0_host_;  // from the topology
  int64_t process0_pid_ = 0;
  bool closing_ = false;

  std::atomic<bool> aborted_{false};
  std::atomic<uint64_t> leaving_count_{0};
  mutable std::mutex leaving_mu_;
  std::unordered_set<int> leaving_;  // grows only with the processes announced
  mutable std::mutex reason_mu_;
  std::string abort_reason_;
  std::string local_address_;  // guarded by reason_mu_
  const std::unique_ptr<ActivityTracker> activity_ = std::make_unique<ActivityTracker>();
  ClientHeartbeats beats_;  // strand state, after activity_ which it reports
};

}  // namespace spmd
