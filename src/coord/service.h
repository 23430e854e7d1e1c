// The coordination service: registration, topology exchange, key-value store, barriers,
// heartbeats, failure broadcast and the shutdown barrier, for one cluster of processes.
//
// Process 0 runs it in-process (spmd::distributed::initialize()); spmd-coordinator runs it
// stand-alone. It serves one cluster, once: after every process has shut down or died it is
// finished. All state lives on one event-loop thread (with a fixed 512 KiB stack: nothing in it
// recurses); the public methods are thread-safe. No phase of a cluster's life costs more than
// O(N log N) in the number of processes N, however many fail or leave at once
// (service_impl.h lists the O(N) steps).
//
// Bad input never reaches that state: a connection sending garbage, an oversized or truncated
// frame, a message of another protocol version, or anything but a registration first, is dropped
// with a logged reason, and the cluster goes on. Before it registers, a connection may declare
// frames of a registration's size only (kMaxRegistrationFrameBytes). Strangers cannot keep the
// job's processes out (admission.h): every process has a slot, and connections that have not
// authenticated share a bounded room of their own from which the oldest is dropped when one
// more arrives, so they cannot make it hold more than num_processes + 192 connections.
// Open to tools/: spmd-coordinator runs the service stand-alone; spmd-bench simulates it.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

namespace spmd {

struct ServiceOptions {
  // The cluster size; every registering process must state the same number.
  int num_processes = 1;
  // "host:port" to listen on; "[::]" listens on every interface (IPv4 too), port 0 picks a free
  // port (see CoordService::port()).
  std::string bind_address = "[::]:0";
  // A registered process silent this long is declared dead.
  std::chrono::milliseconds heartbeat_timeout = std::chrono::seconds(100);
  // A connection that has not sent a whole registration this long after connecting (silent, or
  // stopped half-way through the frame) is dropped, so strangers cannot hold connections open. A
  // real process sends its registration the moment it connects.
  std::chrono::milliseconds handshake_timeout = std::chrono::seconds(10);
  // Processes presenting another token are refused.
  std::string auth_token;
  // "ip:port" where the status page is served (status_http.h), or empty: none.
  std::string status_http_address;
};

class CoordService {
 public:
  // Binds the listening sockets, raising this process's soft open-file limit to what the
  // cluster needs (one descriptor per process) if it is lower. Throws spmd::Error naming the
  // address when it cannot bind, or naming the limits when the hard limit is too low.
  explicit CoordService(ServiceOptions options);
  ~CoordService();
  CoordService(const CoordService&) = delete;
  CoordService& operator=(const CoordService&) = delete;

  // The port the service listens on.
  uint16_t port() const;

  // The status page's address with its token ("http://127.0.0.1:8080/?token=…"), or empty when
  // ServiceOptions::status_http_address is.
  std::string status_url() const;

  // Starts serving on a thread of its own.
  void start();

  // Stops serving and closes every connection. Idempotent.
  void stop();

  // Before the cluster formed: answers every registration still waiting with DeadlineExceeded
  // `why`, so the other processes learn why the service goes away (its host gave up waiting)
  // instead of finding their connections closed. Returns once the answers are queued.
  void fail_registrations(const std::string& why);

  // Waits until the cluster formed and every process has since shut down or died, or until
  // `timeout` passes. Returns whether it finished.
  bool wait_until_finished(std::chrono::milliseconds timeout);

  // Waits until at most `still_open` process connections are open (e.g. 1: only the hosting
  // process's own), or until `timeout` passes. Returns whether that many or fewer are.
  bool wait_until_disconnected(std::chrono::milliseconds timeout, int still_open = 0) const;

  // Counters since start, for monitoring, tests and spmd-bench.
  struct Stats {
    uint64_t dropped_connections = 0;  // for bad input or a missed handshake
    uint64_t barrier_arrivals = 0;     // wait_at_barrier requests received
    uint64_t shutdown_arrivals = 0;    // shutdown barrier requests received
    uint64_t deaths = 0;               // processes declared dead
  };
  Stats stats() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace spmd
