// spmd-bench coordinator-service (internal): the coordination service of the simulated cluster,
// in a process of its own as spmd-coordinator runs it. It prints "ready <service port> <status
// page port, or 0>", then
// obeys commands on stdin, one per line, answering each in order with its id:
//
//   <id> stats                 "<id> stats <barrier arrivals> <shutdown arrivals> <deaths>
//                              <dropped connections>"
//   <id> quit                  stops the service and exits 0
#pragma once

namespace spmd::bench {

struct SimServiceOptions {
  int num_processes = 1;
  int heartbeat_timeout_ms = 100000;
  bool status_page = false;  // serve the status page on 127.0.0.1, a free port
};

// Runs until `quit` or the end of stdin; returns the process exit code.
int run_sim_service(const SimServiceOptions& options);

}  // namespace spmd::bench
