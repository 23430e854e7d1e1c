// spmd-bench coordinator: how fast the coordination service forms, serves and lets go of a large
// cluster, and how it survives losing half of it at once.
//
// The service runs in a process of its own, as spmd-coordinator runs it (sim_service.h); the N
// simulated processes are real CoordClients over real loopback TCP, spread over helper
// processes (sim_clients.h) so that N is not bounded by one process's open-file limit (each
// helper needs about two descriptors per client, the service one). Two clusters are run:
//
// 1. A clean one: registration with topology exchange, barrier rounds, one key-value round and
//    the shutdown barrier, beside the raw TCP fan-out of one message to N connections
//    (tcp_fanout.h) measured first, on the same path.
// 2. A mass failure: after registration, half of the helpers are killed with SIGKILL at once; the
//    time until every survivor has heard of a failure, and that the service still runs and
//    counted each death once.
// 3. With --status-viewers V, in the clean cluster after the barriers: one process's round trip
//    to the service (a key-value get, answered at once by the service's loop, as a heartbeat
//    is) timed alone, then while V viewers of the status page each ask for status.json a second
//    after their last answer, as the page does; with status.json's size, the viewers' waits and
//    the service's resident memory before and during.
//
// Each phase's cost is reported with the service's peak resident memory.
#pragma once

namespace spmd::bench {

struct CoordinatorBenchOptions {
  int processes = 1024;
  int barrier_rounds = 20;
  // Helper processes for the clients; 0: one per 4096 clients, at least two.
  int helpers = 0;
  int client_threads = 1;  // per helper
  bool mass_failure = true;
  int status_viewers = 0;  // > 0: the status phase below
  bool json = false;
};

// Runs the benchmark, prints the figures; returns a process exit code.
int run_coordinator_bench(const CoordinatorBenchOptions& options);

}  // namespace spmd::bench
