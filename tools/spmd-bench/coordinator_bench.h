// spmd-bench coordinator: how fast the coordination service forms and serves a large cluster.
//
// Simulates N processes as lightweight clients (real TCP connections to a real in-process
// service, the same client code as initialize(), driven asynchronously by a few threads) doing
// registration with topology exchange, barriers and one key-value round each.
#pragma once

namespace spmd::bench {

struct CoordinatorBenchOptions {
  int processes = 1024;
  int barrier_rounds = 20;
  int client_threads = 1;
  bool json = false;
};

// Runs the benchmark, prints the figures; returns a process exit code.
int run_coordinator_bench(const CoordinatorBenchOptions& options);

}  // namespace spmd::bench
