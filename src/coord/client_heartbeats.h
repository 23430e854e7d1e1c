// What a coordination client sends of its own accord once the cluster has formed: a heartbeat
// every interval, carrying what the process is doing, and that activity between heartbeats when
// a call finished (the live view, status_board.h). It also notices a service that has been
// silent for the heartbeat timeout. Lives on the client's strand; private to src/coord/.
#pragma once

#include <asio.hpp>
#include <chrono>
#include <memory>
#include <string>

#include "coord/activity.h"
#include "protocol.pb.h"

namespace spmd {

// The client as the heartbeats see it. Every method is called on the client's strand.
class HeartbeatHost {
 public:
  virtual ~HeartbeatHost() = default;
  // The client is closing (or has left): nothing more is sent.
  virtual bool closing() const = 0;
  // A peer or the service died: heartbeats go on, activity reports stop.
  virtual bool aborted() const = 0;
  virtual void send(const wire::ClientMessage& msg) = 0;
  // The service said nothing for the heartbeat timeout.
  virtual void service_silent(const std::string& reason) = 0;
  // Holds the client alive while a timer's handler runs.
  virtual std::shared_ptr<void> keep_alive() = 0;
};

class ClientHeartbeats {
 public:
  using Clock = std::chrono::steady_clock;
  using milliseconds = std::chrono::milliseconds;
  using Strand = asio::strand<asio::io_context::executor_type>;

  // `heartbeat_timeout`: a service silent this long is dead. `num_processes` spaces the activity
  // reports so the service hears about 1000 a second at most.
  ClientHeartbeats(Strand& strand, HeartbeatHost& host, ActivityTracker& activity,
                   milliseconds heartbeat_timeout, int num_processes);

  // Beats every `interval` from now on, and reports activity changes. Once, when the cluster
  // forms.
  void start(milliseconds interval);
  // The service was heard from now.
  void heard() { last_heard_ = Clock::now(); }
  // No more timers. Idempotent.
  void stop();

 private:
  void schedule_heartbeat();
  // Sends the activity when a call finished since the last send: every second in small jobs,
  // less often in large ones (N ms, at most the heartbeat interval).
  void schedule_activity_tick();
  void send_activity();

  Strand& strand_;
  HeartbeatHost& host_;
  ActivityTracker& activity_;
  const milliseconds heartbeat_timeout_;
  const int num_processes_;
  asio::steady_timer heartbeat_timer_;
  asio::steady_timer activity_timer_;
  milliseconds interval_{1000};
  bool started_ = false;
  Clock::time_point last_heard_ = Clock::now();
};

}  // namespace spmd
