// What every job of the coordination service shares (service_impl.h lists the jobs): the options,
// the event loop, the processes' membership and connections, the way to answer a connection, and
// the counters and flags other threads read. Private to src/coord/; used on the event loop only,
// except where a member says otherwise.
#pragma once

#include <asio.hpp>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "coord/admission.h"
#include "coord/connection.h"
#include "coord/membership.h"
#include "coord/refusal_log.h"
#include "coord/service.h"
#include "coord/status.h"
#include "protocol.pb.h"

namespace spmd {

// One accepted connection; process_id is set once its registration is accepted.
struct ServiceSession {
  std::shared_ptr<FramedConnection> conn;
  int process_id = -1;
  bool dropped = false;  // closed by drop(), already logged and counted
  uint64_t arrival = 0;  // its place among the strangers (Admission) while it is one, else 0
  bool tool = false;     // an authenticated status query being answered (Admission)
  std::unique_ptr<asio::steady_timer> handshake_timer;
};

class ServiceContext {
 public:
  using Clock = std::chrono::steady_clock;
  using milliseconds = std::chrono::milliseconds;
  using SessionPtr = std::shared_ptr<ServiceSession>;

  // What ties a process id to its connection (Membership holds the rest).
  struct Link {
    SessionPtr session;
    std::shared_ptr<asio::steady_timer> register_timer;
    Clock::time_point last_heard;
  };

  explicit ServiceContext(ServiceOptions options);

  const ServiceOptions opts;
  asio::io_context io;
  Membership members;
  std::vector<Link> links;  // by process id
  bool stopping = false;    // the service itself is going away: nobody failed
  RefusalLog refusals;      // refused connections and requests, logged without a flood
  Admission admission;      // who may hold a connection: processes, strangers, tools

  // Resets `session` (FramedConnection::reset) after logging `reason` (once, through
  // `refusals`); counted as a dropped connection.
  void drop(ServiceSession& session, const std::string& reason);
  void send(ServiceSession& session, const wire::ServerMessage& msg);
  void reply(ServiceSession& session, uint64_t request_id, const Status& status);
  void reply_ok(ServiceSession& session, uint64_t request_id, wire::ServerMessage msg);

  // A process's connection was accepted, or went away (wait_until_disconnected).
  void connection_opened();
  void connection_gone();
  // Every process has left or died (wait_until_finished).
  void mark_finished();
  bool wait_until_finished(milliseconds timeout);
  bool wait_until_disconnected(milliseconds timeout, int still_open) const;

  // Read by other threads (CoordService::stats()).
  std::atomic<uint64_t> dropped{0};
  std::atomic<uint64_t> barrier_arrivals{0};
  std::atomic<uint64_t> shutdown_arrivals{0};
  std::atomic<uint64_t> deaths{0};

 private:
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  bool finished_ = false;
  int open_process_connections_ = 0;
};

// Server-side timeouts asked for by clients are clamped to [0, a day].
std::chrono::milliseconds clamp_client_timeout(int64_t ms);

}  // namespace spmd
