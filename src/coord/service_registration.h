// Registration: checking a process's claim, holding it until every process has come, and forming
// the cluster with one topology for all; or, when the processes hold different numbers of local
// devices (JAX's rule), refusing every registration with InvalidArgument naming who holds how
// many. Its state is the membership's pending entries and the links' registration timers
// (ServiceContext). Event loop only, but fail_registrations().
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "coord/service_context.h"
#include "coord/service_departures.h"

namespace spmd {

class Registrar {
 public:
  // `departures` starts watching heartbeats once the cluster forms.
  Registrar(ServiceContext& cx, Departures& departures);

  void on_register(const ServiceContext::SessionPtr& session, uint64_t request_id,
                   const wire::RegisterRequest& req);
  // Answers every pending registration with `why` (DeadlineExceeded). Thread-safe: posts to the
  // loop and waits for it, at most 5 s.
  void fail_registrations(const std::string& why);
  // Forgets a pending process whose connection went or whose wait timed out.
  void release_pending(int process);

 private:
  std::optional<Status> check_registration(const wire::RegisterRequest& req) const;
  void start_register_timer(int process, const ServiceContext::SessionPtr& session,
                            ServiceContext::milliseconds timeout);
  // O(N + devices): once per cluster.
  void form();
  // For a registration that timed out: how many connections the service refused or dropped
  // before they authenticated, and from which hosts; empty when none.
  std::string strangers_note() const;

  ServiceContext& cx_;
  Departures& departures_;
};

}  // namespace spmd
