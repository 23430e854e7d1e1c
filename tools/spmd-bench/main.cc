// spmd-bench: spmd's multi-process benchmarks. One subcommand per benchmark:
//   spmd-bench coordinator --processes 4096 [--rounds 20] [--threads 1] [--json]
#include <CLI/CLI.hpp>

#include "spmd-bench/coordinator_bench.h"

int main(int argc, char** argv) {
  CLI::App app{"spmd-bench: spmd's benchmarks"};
  app.require_subcommand(1);
  spmd::bench::CoordinatorBenchOptions coord;
  auto* c = app.add_subcommand(
      "coordinator",
      "time to initialise N simulated processes, barrier latency p50/p99, a key-value round");
  c->add_option("--processes", coord.processes, "simulated processes")->check(CLI::Range(1, 65536));
  c->add_option("--rounds", coord.barrier_rounds, "barrier rounds")->check(CLI::Range(1, 100000));
  c->add_option("--threads", coord.client_threads, "threads driving the clients")
      ->check(CLI::Range(1, 64));
  c->add_flag("--json", coord.json, "print one JSON object");
  CLI11_PARSE(app, argc, argv);
  if (c->parsed()) return spmd::bench::run_coordinator_bench(coord);
  return 2;
}
