// spmd-bench: spmd's multi-process benchmarks. One subcommand per benchmark:
//   spmd-bench coordinator --processes 4096 [--rounds 20] [--helpers K] [--threads 1]
//                          [--no-mass-failure] [--status-viewers 4] [--json]
//   spmd-bench collectives -n 2 [--ops all_reduce,...] [--sizes 8,1M,...]
//                          [--impls spmd,mpi,gloo,jax] [--plot FILE.png]
//                          [--transport auto|tcp|ucx] [--hosts N] [--seconds 0.3] [--json]
//   spmd-bench jit -n 2 [--iterations 7] [--impls spmd,jax] [--rounds 3] [--json]
//   spmd-bench train -n 2 [--iterations 7] [--impls spmd,jax] [--rounds 3] [--platform cpu|gpu]
//                    [--json]
//   spmd-bench random -n 2 [--elements 67108864] [--iterations 5] [--rounds 5] [--json]
//   spmd-bench python [--iterations 5] [--rounds 3] [--json]
//   spmd-bench cores [--iterations 5] [--rounds 2] [--json]
//   spmd-bench reshard -n 2 [--bytes 268435456] [--iterations 5] [--impls spmd,jax] [--rounds 3]
//                      [--json]
//   spmd-bench data -n 2 [--records 1048576] [--record-floats 64] [--batch 1024] [--json]
//   spmd-bench checkpoint -n 2 [--bytes 1073741824] [--compression none|zstd] [--dir D] [--json]
//   spmd-bench checkpoint --orbax [--bytes 1073741824] [--devices 2] [--leaves 8] [--iterations 3]
//     [--json]
//   spmd-bench strangers [-n 3] [--seconds 3] [--rounds 3] [--held 300] [--json]
//   spmd-bench gpu [--matmul-size 8192] [--elements 268435456] [--iterations 20] [--gpu 0]
//                  [--json]                                       (built with the CUDA backend)
#include <CLI/CLI.hpp>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "spmd-bench/checkpoint_bench.h"
#include "spmd-bench/collectives_bench.h"
#include "spmd-bench/coordinator_bench.h"
#include "spmd-bench/data_bench.h"
#ifdef SPMD_BENCH_GPU
#include "spmd-bench/gpu_bench.h"
#endif
#include "spmd-bench/cores_bench.h"
#include "spmd-bench/jit_bench.h"
#include "spmd-bench/python_bench.h"
#include "spmd-bench/random_bench.h"
#include "spmd-bench/reshard_bench.h"
#include "spmd-bench/sim_clients.h"
#include "spmd-bench/sim_service.h"
#include "spmd-bench/strangers_bench.h"
#include "spmd-bench/train_bench.h"

namespace {

using spmd::bench::CheckpointBenchOptions;
using spmd::bench::CollectivesBenchOptions;
using spmd::bench::CoordinatorBenchOptions;
using spmd::bench::CoresBenchOptions;
using spmd::bench::DataBenchOptions;
using spmd::bench::JitBenchOptions;
using spmd::bench::PythonBenchOptions;
using spmd::bench::RandomBenchOptions;
using spmd::bench::ReshardBenchOptions;
using spmd::bench::SimClientsOptions;
using spmd::bench::SimServiceOptions;
using spmd::bench::StrangersBenchOptions;
using spmd::bench::TrainBenchOptions;

// Each subcommand and what it runs once parsed. The options live as long as the run.
using Runs = std::vector<std::pair<CLI::App*, std::function<int()>>>;

// Internal subcommands (the workers a benchmark starts) are not listed in --help.
CLI::App* internal(CLI::App& app, const std::string& name, const std::string& what) {
  CLI::App* sub = app.add_subcommand(name, what + " (internal)");
  sub->group("");
  return sub;
}

void add_coordinator(CLI::App& app, Runs& runs) {
  auto o = std::make_shared<CoordinatorBenchOptions>();
  auto* c = app.add_subcommand(
      "coordinator",
      "time to initialise N simulated processes, barrier latency p50/p99, a key-value round");
  c->add_option("--processes", o->processes, "simulated processes")->check(CLI::Range(1, 65536));
  c->add_option("--rounds", o->barrier_rounds, "barrier rounds")->check(CLI::Range(1, 100000));
  c->add_option("--helpers", o->helpers,
                "helper processes running the clients (default: one per 4096, at least 2)")
      ->check(CLI::Range(0, 1024));
  c->add_option("--threads", o->client_threads, "threads driving the clients of each helper")
      ->check(CLI::Range(1, 64));
  c->add_flag("--mass-failure,!--no-mass-failure", o->mass_failure,
              "also run a second cluster and kill half of it at once (on)");
  c->add_option("--status-viewers", o->status_viewers,
                "viewers of the status page, each asking for status.json a second after its last "
                "answer, while one process's round trips are timed (0: no such phase)")
      ->check(CLI::Range(0, 64));
  c->add_flag("--json", o->json, "print one JSON object");
  runs.emplace_back(c, [o] { return spmd::bench::run_coordinator_bench(*o); });

  auto service = std::make_shared<SimServiceOptions>();
  auto* cs = internal(app, "coordinator-service", "the service of `coordinator`");
  cs->add_option("--processes", service->num_processes)->required();
  cs->add_option("--heartbeat-timeout-ms", service->heartbeat_timeout_ms);
  cs->add_flag("--status-page", service->status_page);
  runs.emplace_back(cs, [service] { return spmd::bench::run_sim_service(*service); });

  auto clients = std::make_shared<SimClientsOptions>();
  auto* cc = internal(app, "coordinator-clients", "clients of `coordinator`");
  cc->add_option("--address", clients->address)->required();
  cc->add_option("--processes", clients->num_processes)->required();
  cc->add_option("--first", clients->first)->required();
  cc->add_option("--count", clients->count)->required()->check(CLI::Range(1, 1 << 20));
  cc->add_option("--threads", clients->threads)->check(CLI::Range(1, 64));
  cc->add_option("--heartbeat-timeout-ms", clients->heartbeat_timeout_ms);
  runs.emplace_back(cc, [clients] { return spmd::bench::run_sim_clients(*clients); });
}

void add_collectives(CLI::App& app, Runs& runs) {
  auto o = std::make_shared<CollectivesBenchOptions>();
  auto add_shared = [o](CLI::App* sub) {
    sub->add_option("--ops", o->ops, "comma-separated ops (default: all)");
    sub->add_option("--sizes", o->sizes,
                    "comma-separated sizes, K/M/G suffixes (default 8 B … 256 MiB)");
    sub->add_option("--seconds", o->seconds_per_point, "measuring time per op and size")
        ->check(CLI::Range(0.001, 60.0));
    sub->add_flag("--bind,!--no-bind", o->bind,
                  "pin spmd's process i to core i, as mpirun binds its ranks by default (on)");
    sub->add_flag("--ordinary-memory", o->ordinary_memory,
                  "spmd's buffers in ordinary memory, not comm memory (spmd/comm_memory.h): "
                  "payloads between processes then take two copies through the rings");
  };
  auto* k = app.add_subcommand(
      "collectives",
      "spmd's collectives beside Open MPI's, Gloo's and JAX's, with a memcpy reference");
  k->add_option("-n,--processes", o->processes, "processes per implementation")
      ->check(CLI::Range(2, 64));
  k->add_option("--impls", o->impls,
                "implementations to run: spmd,mpi,gloo,jax (JAX from the build's venv: jit of "
                "shard_map over Gloo), and ucx (spmd over SPMD_TRANSPORT=ucx)");
  k->add_option("--plot", o->plot,
                "also draw bus bandwidth and latency against size, a line per implementation and "
                "memcpy, into this PNG (matplotlib, installed into the build's venv if missing)");
  k->add_option("--transport", o->transport,
                "auto (shm for spmd, vader for MPI), tcp, or ucx (spmd over its own transports "
                "beside spmd over UCX; UCX_TLS as set)")
      ->check(CLI::IsMember({"auto", "tcp", "ucx"}));
  k->add_option("--hosts", o->hosts,
                "spread spmd's processes over this many host ids (SPMD_HOST_ID): spmd then "
                "crosses hosts over TCP, UCX over its network transports")
      ->check(CLI::Range(0, 64));
  k->add_flag("--json", o->json, "one JSON object per row");
  k->add_flag("--interleave", o->interleave,
              "run every op and size for each implementation in turn, so that the machine's slow "
              "periods fall on all of them");
  k->add_option("--rounds", o->rounds,
                "repeat the whole comparison this many times and report each row's median "
                "round, with the spmd / baseline ratio of every round (default 1)")
      ->check(CLI::Range(1, 100));
  add_shared(k);
  runs.emplace_back(k, [o] { return spmd::bench::run_collectives_bench(*o); });
  auto* w = internal(app, "collectives-worker", "one spmd process of `collectives`");
  add_shared(w);
  runs.emplace_back(w, [o] { return spmd::bench::run_collectives_worker(*o); });
}

// --impls and --rounds of a benchmark with a JAX baseline (jax_baseline.h).
void add_jax_options(CLI::App* cmd, std::string& impls, int& rounds) {
  cmd->add_option("--impls", impls,
                  "spmd, or spmd,jax: the same work with JAX from the build's venv beside spmd's")
      ->check(CLI::IsMember({"spmd", "spmd,jax"}));
  cmd->add_option("--rounds", rounds, "interleaved rounds with JAX (median ratio reported)")
      ->check(CLI::Range(1, 100));
}

void add_reshard(CLI::App& app, Runs& runs) {
  auto o = std::make_shared<ReshardBenchOptions>();
  auto* r = app.add_subcommand(
      "reshard",
      "device_put P(\"x\", None) -> P(None, \"x\") beside an all_to_all of the same bytes");
  r->add_option("-n,--processes", o->processes, "processes")->check(CLI::Range(2, 64));
  r->add_option("--bytes", o->bytes, "bytes of the global float32 array");
  r->add_option("--iterations", o->iterations, "timed repetitions (median reported)")
      ->check(CLI::Range(1, 1000));
  add_jax_options(r, o->impls, o->rounds);
  r->add_flag("--json", o->json, "one JSON object: bytes, reshard_s, all_to_all_s");
  runs.emplace_back(r, [o] { return spmd::bench::run_reshard_bench(*o); });
  auto* rw = internal(app, "reshard-worker", "one process of `reshard`");
  rw->add_option("--bytes", o->bytes);
  rw->add_option("--iterations", o->iterations);
  runs.emplace_back(rw, [o] { return spmd::bench::run_reshard_worker(*o); });
}

void add_jit(CLI::App& app, Runs& runs) {
  auto o = std::make_shared<JitBenchOptions>();
  auto* j = app.add_subcommand(
      "jit",
      "spmd::jit's dispatch, contraction, fusion and MLP beside the same work without it and "
      "beside JAX");
  j->add_option("-n,--processes", o->processes, "processes")->check(CLI::Range(1, 64));
  j->add_option("--iterations", o->iterations, "timed repetitions (median reported)")
      ->check(CLI::Range(1, 1000));
  add_jax_options(j, o->impls, o->rounds);
  j->add_flag("--json", o->json, "one JSON object");
  runs.emplace_back(j, [o] { return spmd::bench::run_jit_bench(*o); });
  auto* jw = internal(app, "jit-worker", "one process of `jit`");
  jw->add_option("--iterations", o->iterations);
  runs.emplace_back(jw, [o] { return spmd::bench::run_jit_worker(*o); });
}

void add_random(CLI::App& app, Runs& runs) {
  auto o = std::make_shared<RandomBenchOptions>();
  auto* r = app.add_subcommand(
      "random", "random normals under jit: sharded beside one process alone, and beside JAX");
  r->add_option("-n,--processes", o->processes, "processes")->check(CLI::Range(1, 64));
  r->add_option("--elements", o->elements, "float32 normals per call")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 32));
  r->add_option("--iterations", o->iterations, "timed calls per measurement (median)")
      ->check(CLI::Range(1, 1000));
  r->add_option("--rounds", o->rounds, "interleaved spmd/JAX rounds (median ratio)")
      ->check(CLI::Range(1, 100));
  r->add_flag("--json", o->json, "one JSON object");
  runs.emplace_back(r, [o] { return spmd::bench::run_random_bench(*o); });
  auto* rw = internal(app, "random-worker", "one process of `random`");
  rw->add_option("--mode", o->mode);
  rw->add_option("--elements", o->elements);
  rw->add_option("--iterations", o->iterations);
  runs.emplace_back(rw, [o] { return spmd::bench::run_random_worker(*o); });
}

void add_python(CLI::App& app, Runs& runs) {
  auto o = std::make_shared<PythonBenchOptions>();
  auto* p = app.add_subcommand(
      "python",
      "the Python package: a cached jit call beside JAX's, the MLP step beside C++, "
      "transcendentals, forward mode and rematerialisation beside JAX's");
  p->add_option("--iterations", o->iterations, "timings per measurement (median)")
      ->check(CLI::Range(1, 1000));
  p->add_option("--rounds", o->rounds, "interleaved rounds (median ratio)")
      ->check(CLI::Range(1, 100));
  p->add_flag("--json", o->json, "one JSON object");
  runs.emplace_back(p, [o] { return spmd::bench::run_python_bench(*o); });
  auto* w = internal(app, "python-cxx-step", "the C++ step of `python`");
  w->add_option("--iterations", o->iterations);
  runs.emplace_back(w, [o] { return spmd::bench::run_python_cxx_step_worker(*o); });
}

void add_cores(CLI::App& app, Runs& runs) {
  auto o = std::make_shared<CoresBenchOptions>();
  auto* c = app.add_subcommand(
      "cores",
      "compute-bound work on every core: issue 51's table, an MLP step and a transformer block "
      "beside JAX, with the machine's sgemm and read limits; 1x1, 1x2 and 2x1 data-parallel");
  c->add_option("--iterations", o->iterations, "timings per measurement (median)")
      ->check(CLI::Range(1, 1000));
  c->add_option("--rounds", o->rounds, "rounds (median ratio)")->check(CLI::Range(1, 100));
  c->add_flag("--json", o->json, "one JSON object on one line");
  runs.emplace_back(c, [o] { return spmd::bench::run_cores_bench(*o); });
}

void add_train(CLI::App& app, Runs& runs) {
  auto o = std::make_shared<TrainBenchOptions>();
  auto* t = app.add_subcommand("train",
                               "an MLP train step: jit+grad+adam beside shard_map, data-parallel "
                               "scaling, compile time and the cache");
  t->add_option("-n,--processes", o->processes, "processes")->check(CLI::Range(1, 64));
  t->add_option("--iterations", o->iterations, "timed repetitions (median reported)")
      ->check(CLI::Range(1, 1000));
  add_jax_options(t, o->impls, o->rounds);
  t->add_option("--platform", o->platform, "cpu, or gpu: spmd and JAX on GPUs")
      ->check(CLI::IsMember({"cpu", "gpu"}));
  t->add_flag("--json", o->json, "one JSON object");
  runs.emplace_back(t, [o] { return spmd::bench::run_train_bench(*o); });
  auto* tw = internal(app, "train-worker", "one process of `train`");
  tw->add_option("--iterations", o->iterations);
  runs.emplace_back(tw, [o] { return spmd::bench::run_train_worker(*o); });
}

void add_checkpoint(CLI::App& app, Runs& runs) {
  auto o = std::make_shared<CheckpointBenchOptions>();
  auto add_shared = [o](CLI::App* cmd) {
    cmd->add_option("--bytes", o->bytes, "bytes of the global float32 array");
    cmd->add_option("--iterations", o->iterations, "timed repetitions (median reported)")
        ->check(CLI::Range(1, 100));
    cmd->add_option("--dir", o->dir, "directory to write in (default: a new one under /tmp)");
    cmd->add_option("--compression", o->compression, "none or zstd")
        ->check(CLI::IsMember({"none", "zstd"}));
  };
  auto* s = app.add_subcommand(
      "checkpoint", "checkpoint save/restore beside a plain write and read of the same bytes");
  s->add_option("-n,--processes", o->processes, "processes")->check(CLI::Range(1, 64));
  s->add_flag("--json", o->json,
              "one JSON object: bytes, save_GBps, restore_GBps, raw_write_GBps, raw_read_GBps");
  s->add_flag("--orbax", o->orbax,
              "instead: restore a checkpoint Orbax wrote, with spmd and with Orbax in JAX, "
              "interleaved (--iterations rounds)");
  s->add_option("--devices", o->devices, "--orbax: CPU devices of the one process")
      ->check(CLI::Range(1, 64));
  s->add_option("--leaves", o->leaves, "--orbax: how many leaves the bytes are split into")
      ->check(CLI::Range(1, 100000));
  add_shared(s);
  runs.emplace_back(s, [o] {
    return o->orbax ? spmd::bench::run_orbax_restore_bench(*o)
                    : spmd::bench::run_checkpoint_bench(*o);
  });
  auto* sw = internal(app, "checkpoint-worker", "one process of `checkpoint`");
  add_shared(sw);
  runs.emplace_back(sw, [o] { return spmd::bench::run_checkpoint_worker(*o); });
}

#ifdef SPMD_BENCH_GPU
void add_gpu(CLI::App& app, Runs& runs) {
  auto o = std::make_shared<spmd::bench::GpuBenchOptions>();
  auto* g = app.add_subcommand(
      "gpu", "the CUDA backend: bf16 matmul beside cuBLAS, a*b+c beside a device copy");
  g->add_option("--matmul-size", o->matmul_size, "the square matrices' side")
      ->check(CLI::Range(int64_t{16}, int64_t{32768}));
  g->add_option("--elements", o->elements, "float32 elements of a, b and c")
      ->check(CLI::Range(int64_t{1024}, int64_t{1} << 32));
  g->add_option("--iterations", o->iterations, "timed calls of each (median)")
      ->check(CLI::Range(1, 1000));
  g->add_option("--gpu", o->gpu, "which visible GPU")->check(CLI::Range(0, 63));
  g->add_flag("--json", o->json, "one JSON object");
  runs.emplace_back(g, [o] { return spmd::bench::run_gpu_bench(*o); });
}
#endif

void add_data(CLI::App& app, Runs& runs) {
  auto o = std::make_shared<DataBenchOptions>();
  auto add_shared = [o](CLI::App* cmd) {
    cmd->add_option("--records", o->records, "records in the file");
    cmd->add_option("--record-floats", o->record_floats, "float32 values per record");
    cmd->add_option("--batch", o->batch, "global batch size");
    cmd->add_option("--prefetch", o->prefetch,
                    "the loader's prefetch (0: no background thread; -1: its default)");
    cmd->add_option("--iterations", o->iterations, "timed repetitions (median reported)")
        ->check(CLI::Range(1, 100));
    cmd->add_option("--dir", o->dir, "directory for the file (default: a new one under /tmp)");
  };
  auto* d = app.add_subcommand(
      "data", "the data loader over a .npy with shuffling beside a sequential read of the file");
  d->add_option("-n,--processes", o->processes, "processes")->check(CLI::Range(1, 64));
  d->add_flag("--json", o->json,
              "one JSON object: records, loader_records_per_s, sequential_records_per_s");
  add_shared(d);
  runs.emplace_back(d, [o] { return spmd::bench::run_data_bench(*o); });
  auto* dw = internal(app, "data-worker", "one process of `data`");
  add_shared(dw);
  runs.emplace_back(dw, [o] { return spmd::bench::run_data_worker(*o); });
}

void add_strangers(CLI::App& app, Runs& runs) {
  auto o = std::make_shared<StrangersBenchOptions>();
  auto* s = app.add_subcommand("strangers",
                               "a job's step rate quiet, beside a CPU hog, and while a stranger "
                               "floods its coordination service's port");
  s->add_option("-n,--processes", o->processes, "processes")->check(CLI::Range(2, 64));
  s->add_option("--seconds", o->seconds, "seconds of steps per job")->check(CLI::Range(0.1, 600.0));
  s->add_option("--rounds", o->rounds, "each condition once per round")->check(CLI::Range(1, 100));
  s->add_option("--held", o->held, "connections the flood holds open")->check(CLI::Range(1, 10000));
  s->add_flag("--json", o->json, "one JSON object");
  runs.emplace_back(s, [o] { return spmd::bench::run_strangers_bench(*o); });
  auto* w = internal(app, "strangers-worker", "one process of `strangers`");
  w->add_option("--seconds", o->seconds);
  runs.emplace_back(w, [o] { return spmd::bench::run_strangers_worker(*o); });
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"spmd-bench: spmd's benchmarks"};
  app.require_subcommand(1);
  Runs runs;
  add_coordinator(app, runs);
  add_collectives(app, runs);
  add_reshard(app, runs);
  add_jit(app, runs);
  add_random(app, runs);
  add_python(app, runs);
  add_cores(app, runs);
  add_train(app, runs);
  add_checkpoint(app, runs);
  add_data(app, runs);
  add_strangers(app, runs);
#ifdef SPMD_BENCH_GPU
  add_gpu(app, runs);
#endif
  CLI11_PARSE(app, argc, argv);
  for (const auto& [sub, run] : runs) {
    if (sub->parsed()) return run();
  }
  return 2;
}
