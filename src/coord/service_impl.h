// The coordination service's inside (service.h is its contract). Private to src/coord/.
//
// One event loop owns all state; each kind of work is in a file of its own:
//   service.cc               life cycle, accepting connections, the handshake deadline and the
//                            one dispatch of every client message
//   service_registration.cc  registration, forming the cluster, the topology
//   service_requests.cc      key-value requests, barriers, the live-process query
//   service_departures.cc    heartbeats, deaths, processes leaving, the shutdown barrier
//   service_status.cc        the live view: status queries, what processes report, what a
//                            barrier's timeout says about those missing
// The states of the processes are a socket-free Membership; the key-value store and barriers
// are the socket-free KvStore and BarrierTable. What is left here is wiring them to connections.
//
// Cost at scale (N processes). Everything the service does per message is O(1) or O(log N),
// except where noted at the function: forming the cluster, the first failure's broadcast and
// each leaver announcement are O(N) once; the heartbeat check is O(N) per tick. Nothing is
// O(N) per process, so no phase of a cluster's life costs N^2.
#pragma once

#include <asio.hpp>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "coord/auth_token.h"
#include "coord/barrier_table.h"
#include "coord/connection.h"
#include "coord/fixed_stack_thread.h"
#include "coord/kv_store.h"
#include "coord/membership.h"
#include "coord/service.h"
#include "coord/status.h"
#include "coord/status_board.h"
#include "coord/status_http.h"
#include "coord/status_query.h"
#include "protocol.pb.h"

namespace spmd {

class CoordService::Impl {
 public:
  using Clock = std::chrono::steady_clock;
  using milliseconds = std::chrono::milliseconds;

  explicit Impl(ServiceOptions options);
  ~Impl() { stop(); }

  uint16_t port() const { return port_; }
  std::string status_url() const { return http_ ? http_->url() : ""; }
  void start();
  void stop();
  void fail_registrations(const std::string& why);
  bool wait_until_finished(milliseconds timeout);
  bool wait_until_disconnected(milliseconds timeout, int still_open) const;
  Stats stats() const;

 private:
  // One accepted connection; process_id is set once its registration is accepted.
  struct Session {
    std::shared_ptr<FramedConnection> conn;
    int process_id = -1;
    bool dropped = false;  // closed by drop(), already logged and counted
    std::unique_ptr<asio::steady_timer> handshake_timer;
  };

  // What ties a process id to its connection (Membership holds the rest).
  struct Link {
    std::shared_ptr<Session> session;
    std::shared_ptr<asio::steady_timer> register_timer;
    Clock::time_point last_heard;
  };

  // service.cc
  void accept(asio::ip::tcp::acceptor& acceptor);
  void on_accept(asio::ip::tcp::socket socket);
  void drop(Session& session, const std::string& reason);
  void send(Session& session, const wire::ServerMessage& msg);
  void reply(Session& session, uint64_t request_id, const Status& status);
  void reply_ok(Session& session, uint64_t request_id, wire::ServerMessage msg);
  void on_message(const std::shared_ptr<Session>& session, std::string_view payload);
  void dispatch(const std::shared_ptr<Session>& session, const wire::ClientMessage& msg);
  void on_close(const std::shared_ptr<Session>& session, const std::string& reason);
  void connection_gone();
  void close_everything();

  // service_registration.cc
  void on_register(const std::shared_ptr<Session>& session, uint64_t request_id,
                   const wire::RegisterRequest& req);
  std::optional<Status> check_registration(const wire::RegisterRequest& req) const;
  void start_register_timer(int process, const std::shared_ptr<Session>& session,
                            milliseconds timeout);
  void release_pending(int process);
  void form();

  // service_requests.cc
  void on_kv_set(Session& session, uint64_t request_id, const wire::KvSetRequest& req);
  void on_kv_get(const std::shared_ptr<Session>& session, uint64_t request_id,
                 const wire::KvGetRequest& req);
  void on_kv_dir_get(Session& session, uint64_t request_id, const wire::KvDirGetRequest& req);
  void on_kv_delete(Session& session, uint64_t request_id, const wire::KvDeleteRequest& req);
  void on_kv_increment(Session& session, uint64_t request_id, const wire::KvIncrementRequest& req);
  void on_barrier(const std::shared_ptr<Session>& session, uint64_t request_id,
                  const wire::BarrierRequest& req);
  std::optional<Status> barrier_blocked(const wire::BarrierRequest& req) const;
  void arm_barrier_deadline(const BarrierTable::InstanceKey& key, milliseconds timeout);
  void on_live_processes(Session& session, uint64_t request_id);

  // service_departures.cc
  void schedule_heartbeat_check();
  void check_heartbeats();
  void declare_dead(int process, std::string reason);
  void handle_death(int process, const std::string& reason);
  void log_death(int process, const std::string& reason);
  void log_death_summary();
  void tell_everyone_of_failure(int process, const std::string& reason);
  void on_shutdown(const std::shared_ptr<Session>& session, uint64_t request_id,
                   const wire::ShutdownRequest& req);
  void schedule_leaver_announcement();
  void announce_leavers();
  void complete_shutdown_if_ready();
  void release_shutdown_waiters(const Status& status);
  void update_finished();

  // service_status.cc
  void on_status_query(const std::shared_ptr<Session>& session, uint64_t request_id,
                       const wire::StatusRequest& req);
  void on_activity(int process, const wire::Activity& activity);
  wire::StatusTable status_table() const;
  // " Now: process 3 (host b, pid 77) is …; process 5 …" for the first few of `ids`.
  std::string what_they_do(const std::vector<int>& ids) const;

  ServiceOptions opts_;
  asio::io_context io_;
  std::vector<asio::ip::tcp::acceptor> acceptors_;  // never resized after construction
  asio::steady_timer heartbeat_timer_;
  asio::steady_timer leaver_timer_;
  uint16_t port_ = 0;
  FixedStackThread thread_;
  std::atomic<bool> stopped_{false};
  std::unique_ptr<StatusHttpServer> http_;  // the status page, when asked for

  // Event-loop state.
  KvStore kv_;
  BarrierTable barriers_;
  Membership members_;
  StatusBoard board_;
  std::vector<Link> links_;  // by process id
  std::set<std::shared_ptr<Session>> sessions_;
  bool stopping_ = false;
  std::map<int, uint64_t> shutdown_waiters_;  // process -> its shutdown request id
  struct BarrierDeadline {
    std::unique_ptr<asio::steady_timer> timer;
    Clock::time_point deadline;
    milliseconds timeout{0};
  };
  // Pending barrier instances (id, generation) -> their deadline (arm_barrier_deadline).
  std::map<std::pair<std::string, uint64_t>, BarrierDeadline> barrier_deadlines_;
  // Deaths not yet handled: a death found while handling another waits here (declare_dead).
  std::deque<std::pair<int, std::string>> pending_deaths_;
  bool handling_deaths_ = false;
  int deaths_logged_ = 0;    // after the first failure, deaths logged one line each
  int deaths_unlogged_ = 0;  // deaths since counted only, for the next summary line
  std::string last_unlogged_death_;
  // Processes that called shutdown() but were not yet announced to those still running, and
  // when the first of them arrived.
  std::vector<int> unannounced_leavers_;
  Clock::time_point first_unannounced_;

  // Shared with waiting threads.
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  bool finished_ = false;
  int open_process_connections_ = 0;
  std::atomic<uint64_t> dropped_{0};
  std::atomic<uint64_t> barrier_arrivals_{0};
  std::atomic<uint64_t> shutdown_arrivals_{0};
  std::atomic<uint64_t> deaths_{0};
};

// Server-side timeouts asked for by clients are clamped to [0, a day].
std::chrono::milliseconds clamp_client_timeout(int64_t ms);

}  // namespace spmd
