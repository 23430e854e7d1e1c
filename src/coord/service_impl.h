// The coordination service's inside (service.h is its contract). Private to src/coord/.
//
// One event loop owns all state. What every job shares is a ServiceContext (the options, the
// loop, the membership, the processes' connections, the way to answer them); each job is a class
// that owns its own state, in a file of its own:
//   Registrar    (service_registration.h)  registration, forming the cluster, the topology
//   Requests     (service_requests.h)      the key-value store, barriers, the live-process query
//   Departures   (service_departures.h)    heartbeats, deaths, processes leaving, the shutdown
//                                          barrier
//   LiveView     (service_status.h)        status queries, what processes report, what a
//                                          barrier's timeout says about those missing
// Impl, here and in service.cc, runs the service's life cycle, accepts connections, holds them
// to the handshake deadline, and dispatches every client message to its job. The socket-free
// parts below the jobs are Membership, KvStore, BarrierTable and StatusBoard.
//
// Cost at scale (N processes). Everything the service does per message is O(1) or O(log N),
// except where noted at the function: forming the cluster, the first failure's broadcast and
// each leaver announcement are O(N) once; the heartbeat check is O(N) per tick. Nothing is
// O(N) per process, so no phase of a cluster's life costs N^2.
#pragma once

#include <asio.hpp>
#include <atomic>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "coord/fixed_stack_thread.h"
#include "coord/service.h"
#include "coord/service_context.h"
#include "coord/service_departures.h"
#include "coord/service_registration.h"
#include "coord/service_requests.h"
#include "coord/service_status.h"
#include "coord/status_http.h"

namespace spmd {

class CoordService::Impl {
 public:
  using milliseconds = std::chrono::milliseconds;

  explicit Impl(ServiceOptions options);
  ~Impl() { stop(); }

  uint16_t port() const { return port_; }
  std::string status_url() const { return http_ ? http_->url() : ""; }
  void start();
  void stop();
  void fail_registrations(const std::string& why) { registrar_.fail_registrations(why); }
  bool wait_until_finished(milliseconds timeout) { return cx_.wait_until_finished(timeout); }
  bool wait_until_disconnected(milliseconds timeout, int still_open) const {
    return cx_.wait_until_disconnected(timeout, still_open);
  }
  Stats stats() const;

 private:
  using SessionPtr = ServiceContext::SessionPtr;

  // Waits for connections on acceptors_[listener], then accepts them a burst at a time.
  void accept(size_t listener);
  void accept_burst(size_t listener);
  void on_accept(asio::ip::tcp::socket socket);
  // Admits `session` among the strangers, dropping the oldest beyond their room.
  void make_room(const SessionPtr& session);
  void on_message(const SessionPtr& session, std::string_view payload);
  // A registered process's message that did not parse: answered with InvalidArgument.
  void on_undecodable(ServiceSession& session, std::string_view payload);
  void dispatch(const SessionPtr& session, const wire::ClientMessage& msg);
  void on_close(const SessionPtr& session, const std::string& reason);
  void close_everything();
  // The table for the page, copied from the loop on the page's thread.
  std::optional<wire::StatusTable> page_table();

  ServiceContext cx_;
  // The jobs (each refers to those it calls; none is used before all are made).
  Requests requests_;  // first: the live view reads its barrier table
  LiveView live_view_;
  Departures departures_;
  Registrar registrar_;

  std::vector<asio::ip::tcp::acceptor> acceptors_;           // never resized after construction
  std::vector<std::unique_ptr<asio::steady_timer>> pauses_;  // one per acceptor (accept_burst)
  uint64_t strangers_ended_ = 0;  // connections closed before they authenticated (on_close)
  uint64_t ended_at_last_burst_ = 0;
  uint16_t port_ = 0;
  FixedStackThread thread_;
  std::atomic<bool> stopped_{false};
  // The status page, when asked for, on a thread and event loop of its own (page_table()).
  asio::io_context http_io_;
  std::thread http_thread_;
  std::unique_ptr<StatusHttpServer> http_;
  std::set<SessionPtr> sessions_;  // every open connection
};

}  // namespace spmd
