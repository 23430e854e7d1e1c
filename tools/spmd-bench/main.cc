// spmd-bench: spmd's multi-process benchmarks. One subcommand per benchmark:
//   spmd-bench coordinator --processes 4096 [--rounds 20] [--helpers K] [--threads 1]
//                          [--no-mass-failure] [--json]
//   spmd-bench collectives -n 2 [--ops all_reduce,...] [--sizes 8,1M,...] [--impls spmd,mpi,gloo]
//                          [--transport auto|tcp] [--seconds 0.3] [--json]
//   spmd-bench reshard -n 2 [--bytes 268435456] [--iterations 5] [--json]
//   spmd-bench data -n 2 [--records 1048576] [--record-floats 64] [--batch 1024] [--json]
//   spmd-bench checkpoint -n 2 [--bytes 1073741824] [--compression none|zstd] [--dir D] [--json]
#include <CLI/CLI.hpp>

#include "spmd-bench/checkpoint_bench.h"
#include "spmd-bench/collectives_bench.h"
#include "spmd-bench/coordinator_bench.h"
#include "spmd-bench/data_bench.h"
#include "spmd-bench/reshard_bench.h"
#include "spmd-bench/sim_clients.h"
#include "spmd-bench/sim_service.h"

int main(int argc, char** argv) {
  CLI::App app{"spmd-bench: spmd's benchmarks"};
  app.require_subcommand(1);
  spmd::bench::CoordinatorBenchOptions coord;
  auto* c = app.add_subcommand(
      "coordinator",
      "time to initialise N simulated processes, barrier latency p50/p99, a key-value round");
  c->add_option("--processes", coord.processes, "simulated processes")->check(CLI::Range(1, 65536));
  c->add_option("--rounds", coord.barrier_rounds, "barrier rounds")->check(CLI::Range(1, 100000));
  c->add_option("--helpers", coord.helpers,
                "helper processes running the clients (default: one per 4096, at least 2)")
      ->check(CLI::Range(0, 1024));
  c->add_option("--threads", coord.client_threads, "threads driving the clients of each helper")
      ->check(CLI::Range(1, 64));
  c->add_flag("--mass-failure,!--no-mass-failure", coord.mass_failure,
              "also run a second cluster and kill half of it at once (on)");
  c->add_flag("--json", coord.json, "print one JSON object");
  spmd::bench::SimServiceOptions sim_service;
  auto* cs = app.add_subcommand("coordinator-service", "the service of `coordinator` (internal)");
  cs->add_option("--processes", sim_service.num_processes)->required();
  cs->add_option("--heartbeat-timeout-ms", sim_service.heartbeat_timeout_ms);
  cs->group("");
  spmd::bench::SimClientsOptions sim_clients;
  auto* cc = app.add_subcommand("coordinator-clients", "clients of `coordinator` (internal)");
  cc->add_option("--address", sim_clients.address)->required();
  cc->add_option("--processes", sim_clients.num_processes)->required();
  cc->add_option("--first", sim_clients.first)->required();
  cc->add_option("--count", sim_clients.count)->required()->check(CLI::Range(1, 1 << 20));
  cc->add_option("--threads", sim_clients.threads)->check(CLI::Range(1, 64));
  cc->add_option("--heartbeat-timeout-ms", sim_clients.heartbeat_timeout_ms);
  cc->group("");

  spmd::bench::CollectivesBenchOptions coll;
  auto add_collective_options = [&coll](CLI::App* sub) {
    sub->add_option("--ops", coll.ops, "comma-separated ops (default: all)");
    sub->add_option("--sizes", coll.sizes,
                    "comma-separated sizes, K/M/G suffixes (default 8 B … 256 MiB)");
    sub->add_option("--seconds", coll.seconds_per_point, "measuring time per op and size")
        ->check(CLI::Range(0.001, 60.0));
    sub->add_flag("--bind,!--no-bind", coll.bind,
                  "pin spmd's process i to core i, as mpirun binds its ranks by default (on)");
  };
  auto* k = app.add_subcommand(
      "collectives", "spmd's collectives beside Open MPI's and Gloo's, with a memcpy reference");
  k->add_option("-n,--processes", coll.processes, "processes per implementation")
      ->check(CLI::Range(2, 64));
  k->add_option("--impls", coll.impls, "implementations to run: spmd,mpi,gloo");
  k->add_option("--transport", coll.transport, "auto (shm for spmd, vader for MPI) or tcp")
      ->check(CLI::IsMember({"auto", "tcp"}));
  k->add_flag("--json", coll.json, "one JSON object per row");
  k->add_flag("--interleave", coll.interleave,
              "run every op and size for each implementation in turn, so that the machine's slow "
              "periods fall on all of them");
  k->add_option("--rounds", coll.rounds,
                "repeat the whole comparison this many times and report each row's median "
                "round, with the spmd / baseline ratio of every round (default 1)")
      ->check(CLI::Range(1, 100));
  add_collective_options(k);
  auto* w =
      app.add_subcommand("collectives-worker", "one spmd process of `collectives` (internal)");
  add_collective_options(w);
  w->group("");  // not listed in --help

  spmd::bench::ReshardBenchOptions resh;
  auto* r = app.add_subcommand(
      "reshard",
      "device_put P(\"x\", None) -> P(None, \"x\") beside an all_to_all of the same bytes");
  r->add_option("-n,--processes", resh.processes, "processes")->check(CLI::Range(2, 64));
  r->add_option("--bytes", resh.bytes, "bytes of the global float32 array");
  r->add_option("--iterations", resh.iterations, "timed repetitions (median reported)")
      ->check(CLI::Range(1, 1000));
  r->add_flag("--json", resh.json, "one JSON object: bytes, reshard_s, all_to_all_s");
  auto* rw = app.add_subcommand("reshard-worker", "one process of `reshard` (internal)");
  rw->add_option("--bytes", resh.bytes);
  rw->add_option("--iterations", resh.iterations);
  rw->group("");

  spmd::bench::CheckpointBenchOptions ck;
  auto* s = app.add_subcommand(
      "checkpoint", "checkpoint save/restore beside a plain write and read of the same bytes");
  auto add_checkpoint_options = [&](CLI::App* cmd) {
    cmd->add_option("--bytes", ck.bytes, "bytes of the global float32 array");
    cmd->add_option("--iterations", ck.iterations, "timed repetitions (median reported)")
        ->check(CLI::Range(1, 100));
    cmd->add_option("--dir", ck.dir, "directory to write in (default: a new one under /tmp)");
    cmd->add_option("--compression", ck.compression, "none or zstd")
        ->check(CLI::IsMember({"none", "zstd"}));
  };
  s->add_option("-n,--processes", ck.processes, "processes")->check(CLI::Range(1, 64));
  s->add_flag("--json", ck.json,
              "one JSON object: bytes, save_GBps, restore_GBps, raw_write_GBps, raw_read_GBps");
  add_checkpoint_options(s);
  auto* sw = app.add_subcommand("checkpoint-worker", "one process of `checkpoint` (internal)");
  add_checkpoint_options(sw);
  sw->group("");

  spmd::bench::DataBenchOptions db;
  auto* d = app.add_subcommand(
      "data", "the data loader over a .npy with shuffling beside a sequential read of the file");
  auto add_data_options = [&](CLI::App* cmd) {
    cmd->add_option("--records", db.records, "records in the file");
    cmd->add_option("--record-floats", db.record_floats, "float32 values per record");
    cmd->add_option("--batch", db.batch, "global batch size");
    cmd->add_option("--prefetch", db.prefetch,
                    "the loader's prefetch (0: no background thread; -1: its default)");
    cmd->add_option("--iterations", db.iterations, "timed repetitions (median reported)")
        ->check(CLI::Range(1, 100));
    cmd->add_option("--dir", db.dir, "directory for the file (default: a new one under /tmp)");
  };
  d->add_option("-n,--processes", db.processes, "processes")->check(CLI::Range(1, 64));
  d->add_flag("--json", db.json,
              "one JSON object: records, loader_records_per_s, sequential_records_per_s");
  add_data_options(d);
  auto* dw = app.add_subcommand("data-worker", "one process of `data` (internal)");
  add_data_options(dw);
  dw->group("");

  CLI11_PARSE(app, argc, argv);
  if (d->parsed()) return spmd::bench::run_data_bench(db);
  if (dw->parsed()) return spmd::bench::run_data_worker(db);
  if (s->parsed()) return spmd::bench::run_checkpoint_bench(ck);
  if (sw->parsed()) return spmd::bench::run_checkpoint_worker(ck);
  if (r->parsed()) return spmd::bench::run_reshard_bench(resh);
  if (rw->parsed()) return spmd::bench::run_reshard_worker(resh);
  if (c->parsed()) return spmd::bench::run_coordinator_bench(coord);
  if (cs->parsed()) return spmd::bench::run_sim_service(sim_service);
  if (cc->parsed()) return spmd::bench::run_sim_clients(sim_clients);
  if (k->parsed()) return spmd::bench::run_collectives_bench(coll);
  if (w->parsed()) return spmd::bench::run_collectives_worker(coll);
  return 2;
}
