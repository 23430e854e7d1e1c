// How processes leave the cluster: dying (a dropped connection, missed heartbeats) or calling
// shutdown(), and the shutdown barrier that lets them go together (service_departures.cc says how
// it stays linear when thousands leave at once). Owns the heartbeat check, the queue of deaths
// and their log, the shutdown waiters and the leavers not yet announced. Event loop only.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "coord/barrier_table.h"
#include "coord/service_context.h"
#include "coord/service_status.h"

namespace spmd {

class Departures {
 public:
  // `barriers` fail for a process that dies or leaves; `view` records the deaths.
  Departures(ServiceContext& cx, LiveView& view, BarrierTable& barriers);

  // Starts the periodic heartbeat check (once the cluster has formed).
  void schedule_heartbeat_check();
  // Queues a death and handles the queue unless a handler further up the stack is at it.
  void declare_dead(int process, std::string reason);
  void on_shutdown(const ServiceContext::SessionPtr& session, uint64_t request_id,
                   const wire::ShutdownRequest& req);
  // The service stops: timers cancelled, the deaths still only counted logged.
  void stop();

 private:
  using Clock = ServiceContext::Clock;
  using milliseconds = ServiceContext::milliseconds;

  void check_heartbeats();
  void handle_death(int process, const std::string& reason);
  void log_death(int process, const std::string& reason);
  void log_death_summary();
  void tell_everyone_of_failure(int process, const std::string& reason);
  void schedule_leaver_announcement();
  void announce_leavers();
  void complete_shutdown_if_ready();
  void release_shutdown_waiters(const Status& status);
  void update_finished();

  ServiceContext& cx_;
  LiveView& view_;
  BarrierTable& barriers_;
  asio::steady_timer heartbeat_timer_;
  asio::steady_timer leaver_timer_;
  std::map<int, uint64_t> shutdown_waiters_;  // process -> its shutdown request id
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
};

}  // namespace spmd
