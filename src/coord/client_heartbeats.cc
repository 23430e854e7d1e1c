#include "coord/client_heartbeats.h"

#include <fmt/format.h>

#include <algorithm>

namespace spmd {

ClientHeartbeats::ClientHeartbeats(Strand& strand, HeartbeatHost& host, ActivityTracker& activity,
                                   milliseconds heartbeat_timeout, int num_processes)
    : strand_(strand),
      host_(host),
      activity_(activity),
      heartbeat_timeout_(heartbeat_timeout),
      num_processes_(num_processes),
      heartbeat_timer_(strand),
      activity_timer_(strand) {}

void ClientHeartbeats::start(milliseconds interval) {
  interval_ = interval;
  started_ = true;
  schedule_heartbeat();
  schedule_activity_tick();
  activity_.on_change([this, owner = std::weak_ptr<void>(host_.keep_alive())] {
    auto alive = owner.lock();
    if (!alive) return;
    asio::post(strand_, [this, alive] { send_activity(); });
  });
}

void ClientHeartbeats::stop() {
  heartbeat_timer_.cancel();
  activity_timer_.cancel();
}

void ClientHeartbeats::schedule_heartbeat() {
  heartbeat_timer_.expires_after(interval_);
  heartbeat_timer_.async_wait([this, alive = host_.keep_alive()](asio::error_code ec) {
    if (ec || host_.closing()) return;
    if (!host_.aborted() && Clock::now() - last_heard_ > heartbeat_timeout_) {
      host_.service_silent(fmt::format("the coordination service has been silent for {} ms",
                                       heartbeat_timeout_.count()));
    }
    wire::ClientMessage hb;
    *hb.mutable_heartbeat()->mutable_activity() = activity_.snapshot(Clock::now());
    host_.send(hb);
    schedule_heartbeat();
  });
}

void ClientHeartbeats::schedule_activity_tick() {
  const milliseconds interval = std::clamp(milliseconds(num_processes_), milliseconds(1000),
                                           std::max(interval_, milliseconds(1000)));
  activity_timer_.expires_after(interval);
  activity_timer_.async_wait([this, alive = host_.keep_alive()](asio::error_code ec) {
    if (ec || host_.closing() || host_.aborted()) return;
    if (activity_.finished_since_snapshot()) send_activity();
    schedule_activity_tick();
  });
}

void ClientHeartbeats::send_activity() {
  if (!started_ || host_.closing() || host_.aborted()) return;
  wire::ClientMessage msg;
  *msg.mutable_activity() = activity_.snapshot(Clock::now());
  host_.send(msg);
}

}  // namespace spmd
