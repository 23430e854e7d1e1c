#include "spmd-bench/collectives_bench.h"

#include <fmt/format.h>
#include <sched.h>
#include <spmd/communicator.h>
#include <spmd/spmd.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <memory>
#include <sstream>
#include <thread>
#include <vector>

#include "comm/ucx_transport.h"
#include "common/subprocess.h"
#include "spmd-bench/collective_sweep.h"
#include "spmd-bench/exchange_reference.h"
#include "spmd-bench/jax_baseline.h"
#include "spmd-bench/result_row.h"
#include "spmd-bench/workers.h"

namespace spmd::bench {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

class SpmdImpl final : public CollectiveImpl {
 public:
  // `name`: "spmd", or "ucx" for spmd over SPMD_TRANSPORT=ucx.
  // `comm_memory`: buffers in comm memory (spmd/comm_memory.h), as users allocate for
  // collectives; else ordinary memory.
  SpmdImpl(std::string name, bool comm_memory)
      : world_(spmd::world()), name_(std::move(name)), comm_memory_(comm_memory) {}
  int rank() override { return world_.rank(); }
  int size() override { return world_.size(); }
  const char* name() override { return name_.c_str(); }
  std::string transport() override { return world_.transport(); }
  bool supports(const std::string&) override { return true; }
  void run(const std::string& op, const float* in, float* out, size_t count) override {
    if (op == "all_reduce") {
      world_.all_reduce(DType::kFloat32, in, out, count, ReduceOp::kSum);
    } else if (op == "all_gather") {
      world_.all_gather(DType::kFloat32, in, out, count);
    } else if (op == "reduce_scatter") {
      world_.reduce_scatter(DType::kFloat32, in, out, count, ReduceOp::kSum);
    } else if (op == "all_to_all") {
      world_.all_to_all(DType::kFloat32, in, out, count);
    } else if (op == "broadcast") {
      world_.broadcast(DType::kFloat32, out, out, count, 0);
    }
  }
  void barrier() override { world_.barrier(); }
  bool all_true(bool mine) override {
    int32_t v = mine ? 1 : 0;
    world_.all_reduce(std::span<int32_t>(&v, 1), ReduceOp::kMin);
    return v == 1;
  }
  float* allocate(size_t count) override {
    if (!comm_memory_) return CollectiveImpl::allocate(count);
    return static_cast<float*>(allocate_comm_memory(count * sizeof(float)));
  }
  void deallocate(float* p, size_t count) override {
    if (!comm_memory_) return CollectiveImpl::deallocate(p, count);
    free_comm_memory(p, count * sizeof(float));
  }

 private:
  Communicator world_;
  std::string name_;
  bool comm_memory_;
};

SweepOptions sweep_options(const CollectivesBenchOptions& o) {
  SweepOptions s;
  s.ops = o.ops.empty() ? default_ops() : parse_list(o.ops);
  s.sizes = o.sizes.empty() ? default_sizes() : parse_sizes(o.sizes);
  s.seconds_per_point = o.seconds_per_point;
  return s;
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ",") + x;
  return s;
}

std::string sizes_arg(const std::vector<size_t>& v) {
  std::string s;
  for (size_t x : v) s += (s.empty() ? "" : ",") + std::to_string(x);
  return s;
}

// spmd's processes: `impl` "spmd" over the transport --transport names (auto for --transport
// ucx, the baseline UCX is compared with), or "ucx" over SPMD_TRANSPORT=ucx (UCX_TLS and the
// other UCX variables as the caller set them). With --hosts, process i gets host id
// bench-host-<i * hosts / processes>.
std::vector<std::string> run_spmd(const CollectivesBenchOptions& o, const SweepOptions& s,
                                  const std::string& impl) {
  const std::string address = "127.0.0.1:" + std::to_string(tools::free_port());
  std::vector<std::vector<std::string>> argvs;
  std::vector<std::vector<std::pair<std::string, std::string>>> envs;
  for (int i = 0; i < o.processes; ++i) {
    argvs.push_back({(self_dir() / "spmd-bench").string(), "collectives-worker", "--ops",
                     join(s.ops), "--sizes", sizes_arg(s.sizes), "--seconds",
                     std::to_string(s.seconds_per_point)});
    argvs.back().push_back(o.bind ? "--bind" : "--no-bind");
    if (o.ordinary_memory) argvs.back().push_back("--ordinary-memory");
    EnvList env = spmd_worker_env(address, o.processes, i);
    if (impl == "ucx") {
      env.emplace_back("SPMD_TRANSPORT", "ucx");
    } else if (o.transport == "tcp") {
      env.emplace_back("SPMD_TRANSPORT", "tcp");
    }
    env.emplace_back("SPMD_BENCH_IMPL", impl);
    if (o.hosts > 0) {
      env.emplace_back("SPMD_HOST_ID", fmt::format("bench-host-{}", i * o.hosts / o.processes));
    }
    envs.push_back(env);
  }
  return run_workers(argvs, envs);
}

std::vector<std::string> run_mpi(const CollectivesBenchOptions& o, const SweepOptions& s) {
  const fs::path worker = self_dir() / "spmd-bench-mpi";
  if (!fs::exists(worker) || !on_path("mpirun.openmpi")) {
    fmt::print(stderr,
               "spmd-bench: no Open MPI baseline (spmd-bench-mpi or mpirun.openmpi "
               "missing: install libopenmpi-dev and openmpi-bin, then rebuild)\n");
    return {};
  }
  const std::string btl = o.transport == "tcp" ? "self,tcp" : "self,vader";
  std::vector<std::string> argv = {
      "mpirun.openmpi", "-np", std::to_string(o.processes), "--oversubscribe", "--mca", "btl", btl};
  if (o.transport == "tcp") {
    for (const char* a : {"--mca", "btl_tcp_if_include", "lo"}) argv.push_back(a);
  }
  if (::getuid() == 0) argv.push_back("--allow-run-as-root");
  for (const std::string& a :
       {worker.string(), join(s.ops), sizes_arg(s.sizes), std::to_string(s.seconds_per_point)}) {
    argv.push_back(a);
  }
  return run_workers({argv},
                     {{{"SPMD_BENCH_MPI_TRANSPORT", o.transport == "tcp" ? "tcp" : "vader"}}});
}

std::vector<std::string> run_gloo(const CollectivesBenchOptions& o, const SweepOptions& s) {
  const fs::path worker = self_dir() / "spmd-bench-gloo";
  if (!fs::exists(worker)) {
    fmt::print(stderr,
               "spmd-bench: no Gloo baseline (spmd-bench-gloo missing: install "
               "libgloo-dev, then rebuild)\n");
    return {};
  }
  char dir[] = "/tmp/spmd-bench-gloo-XXXXXX";
  if (::mkdtemp(dir) == nullptr) return {};
  std::vector<std::vector<std::string>> argvs;
  std::vector<std::vector<std::pair<std::string, std::string>>> envs;
  for (int i = 0; i < o.processes; ++i) {
    argvs.push_back({worker.string(), std::to_string(i), std::to_string(o.processes), dir,
                     join(s.ops), sizes_arg(s.sizes), std::to_string(s.seconds_per_point)});
    envs.emplace_back();
  }
  auto rows = run_workers(argvs, envs);
  fs::remove_all(dir);
  return rows;
}

// JAX's processes: jit of shard_map with JAX's collectives over Gloo (jax_worker.py).
std::vector<std::string> run_jax(const CollectivesBenchOptions& o, const SweepOptions& s) {
  return run_jax_job(o.processes, "collectives",
                     {join(s.ops), sizes_arg(s.sizes), std::to_string(s.seconds_per_point)},
                     o.bind);
}

// Single-thread memcpy at each size, buffers rotated like the collectives'.
std::vector<ResultRow> memcpy_reference(const SweepOptions& s) {
  std::vector<ResultRow> rows;
  for (size_t bytes : s.sizes) {
    const size_t pool = rotating_buffers(bytes);
    std::vector<std::vector<char>> src(pool, std::vector<char>(bytes, 1));
    std::vector<std::vector<char>> dst(pool, std::vector<char>(bytes, 0));
    const int iterations = static_cast<int>(std::clamp<double>(
        s.seconds_per_point / std::max(static_cast<double>(bytes) / 5e9, 1e-7), 5, 2000));
    std::vector<double> times;
    for (int i = 0; i < iterations; ++i) {
      const size_t k = static_cast<size_t>(i) % pool;
      const auto t0 = std::chrono::steady_clock::now();
      std::memcpy(dst[k].data(), src[k].data(), bytes);
      asm volatile("" : : "r"(dst[k].data()) : "memory");
      times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    const ResultRow row = reference_row("memcpy", "memory", 1, bytes, std::move(times));
    rows.push_back(row);
  }
  return rows;
}

// The rows among a worker's output lines; a line that is not a row is reported, not guessed at.
std::vector<ResultRow> rows_of(const std::vector<std::string>& lines) {
  std::vector<ResultRow> rows;
  for (const std::string& line : lines) {
    if (auto row = parse_row(line)) {
      rows.push_back(std::move(*row));
    } else {
      fmt::print(stderr, "spmd-bench: ignoring a malformed result line: {}\n", line);
    }
  }
  return rows;
}

std::string human(size_t bytes) {
  if (bytes >= (1u << 20) && bytes % (1u << 20) == 0) return fmt::format("{} MiB", bytes >> 20);
  if (bytes >= 1024 && bytes % 1024 == 0) return fmt::format("{} KiB", bytes >> 10);
  return fmt::format("{} B", bytes);
}

// Per op, size and implementation, the round with the median p50, marked with the number of
// rounds and correct only when every round was.
std::vector<ResultRow> median_rows(const std::vector<std::vector<ResultRow>>& rounds) {
  if (rounds.size() == 1) return rounds.front();
  std::vector<ResultRow> out;
  for (const ResultRow& first : rounds.front()) {
    std::vector<ResultRow> same;
    bool correct = true;
    for (const auto& round : rounds) {
      for (const ResultRow& r : round) {
        if (r.key() != first.key()) continue;
        same.push_back(r);
        correct &= r.correct;
      }
    }
    std::sort(same.begin(), same.end(),
              [](const ResultRow& a, const ResultRow& b) { return a.p50_us < b.p50_us; });
    ResultRow row = same[same.size() / 2];
    row.correct = correct;
    row.rounds = static_cast<int>(same.size());
    out.push_back(row);
  }
  return out;
}

// One line of per-round ratios: their median, minimum and every round's.
void print_ratio_line(const ResultRow& row, const std::string& baseline,
                      const std::vector<double>& ratios) {
  if (ratios.empty()) return;
  std::vector<double> sorted = ratios;
  std::sort(sorted.begin(), sorted.end());
  std::string each;
  for (double r : ratios) each += fmt::format("{}{:.2f}", each.empty() ? "" : " ", r);
  fmt::print("{:<15} {:>9} vs {:<6} median {:.2f}  min {:.2f}  rounds: {}\n", row.op,
             human(row.bytes), baseline, sorted[sorted.size() / 2], sorted.front(), each);
}

// Per op and size, spmd's busbw over each baseline's, round by round (for the 8-byte row, whose
// bandwidth is noise, the baseline's p50 over spmd's: above 1 means spmd is faster either way);
// then, where the rounds measured memcpy beside every point, spmd's busbw over memcpy's.
void print_ratios(const std::vector<std::vector<ResultRow>>& rounds) {
  fmt::print(
      "\nspmd / baseline, per round (above 1: spmd faster; busbw ratio, time ratio at 8 B)\n");
  // The value of the row of `impl` and `op` at `bytes` in `round`, 0 when there is none.
  auto value = [](const std::vector<ResultRow>& round, const std::string& impl,
                  const std::string& op, size_t bytes) {
    for (const ResultRow& r : round) {
      if (r.impl == impl && r.op == op && r.bytes == bytes) {
        return bytes <= 8 ? 1.0 / r.p50_us : r.busbw_GBps;
      }
    }
    return 0.0;
  };
  auto ratios_of = [&](const ResultRow& row, const std::string& impl, const std::string& op) {
    std::vector<double> ratios;
    for (const auto& round : rounds) {
      const double spmd = value(round, "spmd", row.op, row.bytes);
      const double other = value(round, impl, op, row.bytes);
      if (spmd > 0 && other > 0) ratios.push_back(spmd / other);
    }
    return ratios;
  };
  for (const ResultRow& row : rounds.front()) {
    if (row.impl == "spmd" || row.impl == "reference") continue;
    print_ratio_line(row, row.impl, ratios_of(row, row.impl, row.op));
  }
  for (const ResultRow& row : rounds.front()) {
    if (row.impl != "spmd" || row.bytes <= 8) continue;
    print_ratio_line(row, "memcpy", ratios_of(row, "reference", "memcpy"));
  }
}

}  // namespace

int run_collectives_worker(const CollectivesBenchOptions& options) {
  spmd::distributed::initialize();
  if (options.bind) {
    // One core per process, as mpirun does by default.
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(spmd::process_index() % static_cast<int>(std::thread::hardware_concurrency()), &set);
    ::sched_setaffinity(0, sizeof(set), &set);
  }
  {
    const char* name = std::getenv("SPMD_BENCH_IMPL");
    SpmdImpl impl(name != nullptr ? name : "spmd", !options.ordinary_memory);
    sweep(impl, sweep_options(options));
    impl.barrier();
    if (impl.rank() == 0 && !options.ordinary_memory) {
      const CommMemoryStats st = comm_memory_stats();
      fmt::print(stderr,
                 "spmd-bench: rank 0 read {} payloads ({} MiB) straight from its peers' comm "
                 "memory and wrote {} ({} MiB) straight into it\n",
                 st.payloads_read_from_peers, st.bytes_read_from_peers >> 20,
                 st.payloads_written_to_peers, st.bytes_written_to_peers >> 20);
    }
  }
  spmd::distributed::shutdown();
  return 0;
}

int run_collectives_bench(const CollectivesBenchOptions& options) {
  const SweepOptions s = sweep_options(options);
  // --transport ucx compares spmd over UCX with spmd over its own transports, unless --impls
  // says otherwise.
  const std::string impls_arg =
      options.transport == "ucx" && options.impls == CollectivesBenchOptions{}.impls
          ? "spmd,ucx"
          : options.impls;
  const std::vector<std::string> impls = parse_list(impls_arg);
  for (const std::string& impl : impls) {
    if (impl != "spmd" && impl != "ucx" && impl != "mpi" && impl != "gloo" && impl != "jax") {
      fmt::print(stderr, "spmd-bench: unknown implementation {:?} (spmd, ucx, mpi, gloo, jax)\n",
                 impl);
      return 2;
    }
    if (impl == "ucx" && !ucx_built()) {
      fmt::print(stderr, "spmd-bench: {}: no ucx rows\n", ucx_summary());
      return 2;
    }
  }
  if (!options.json && std::find(impls.begin(), impls.end(), "ucx") != impls.end()) {
    const char* tls = std::getenv("UCX_TLS");
    fmt::print("ucx rows: SPMD_TRANSPORT=ucx, UCX_TLS={}; {}\n", tls != nullptr ? tls : "(unset)",
               ucx_summary());
    // Processes sharing a host id reach each other through the within-host setup.
    if (options.hosts == 0 || options.hosts < options.processes) {
      fmt::print("ucx within a host: {}\n", ucx_settings(UcxReach::kWithinHost));
    }
    if (options.hosts > 1) {
      fmt::print("ucx across hosts: {}\n", ucx_settings(UcxReach::kAcrossHosts));
    }
  }
  // Each implementation sweeps everything in one set of processes, or — interleaved — every op
  // and size point runs for each implementation in turn, so a slow period of the machine falls
  // on all of them rather than on whichever happened to be running.
  std::vector<SweepOptions> points;
  if (options.interleave) {
    for (const std::string& op : s.ops) {
      for (size_t bytes : s.sizes) {
        SweepOptions one = s;
        one.ops = {op};
        one.sizes = {bytes};
        points.push_back(one);
      }
    }
  } else {
    points.push_back(s);
  }
  std::vector<std::vector<ResultRow>> rounds;
  for (int round = 0; round < options.rounds; ++round) {
    std::vector<ResultRow>& rows = rounds.emplace_back();
    for (const SweepOptions& point : points) {
      for (const std::string& impl : impls) {
        std::vector<ResultRow> got;
        if (impl == "spmd" || impl == "ucx") {
          got = rows_of(run_spmd(options, point, impl));
        } else if (impl == "mpi") {
          got = rows_of(run_mpi(options, point));
        } else if (impl == "jax") {
          got = rows_of(run_jax(options, point));
        } else {
          got = rows_of(run_gloo(options, point));
        }
        if (options.json && options.rounds == 1) {
          for (const auto& r : got) fmt::print("{}\n", to_json_line(r));
          std::fflush(stdout);
        }
        rows.insert(rows.end(), got.begin(), got.end());
      }
      if (options.interleave) {
        // memcpy beside every point as well, so that spmd's ratio to it is taken in the same
        // moment of the machine.
        const auto copy = memcpy_reference(point);
        if (options.json && options.rounds == 1) {
          for (const auto& r : copy) fmt::print("{}\n", to_json_line(r));
        }
        rows.insert(rows.end(), copy.begin(), copy.end());
      }
    }
  }
  const std::vector<ResultRow> rows = median_rows(rounds);
  if (options.json && options.rounds > 1) {
    for (const auto& r : rows) fmt::print("{}\n", to_json_line(r));
  }
  auto reference = options.interleave ? std::vector<ResultRow>{} : memcpy_reference(s);
  if (options.processes >= 2) {
    const auto exchange = exchange_reference(s, options.bind);
    reference.insert(reference.end(), exchange.begin(), exchange.end());
  }
  if (options.json) {
    for (const auto& r : reference) fmt::print("{}\n", to_json_line(r));
  } else {
    fmt::print("{:<15} {:>9} {:<6} {:<6} {:>11} {:>11} {:>10} {:>10} {}\n", "op", "bytes", "impl",
               "link", "p50 us", "p99 us", "algbw GB/s", "busbw GB/s", "correct");
    auto all = rows;
    all.insert(all.end(), reference.begin(), reference.end());
    for (const auto& r : all) {
      fmt::print("{:<15} {:>9} {:<6} {:<6} {:>11.3f} {:>11.3f} {:>10.3f} {:>10.3f} {}\n", r.op,
                 human(r.bytes), r.impl, r.transport, r.p50_us, r.p99_us, r.algbw_GBps,
                 r.busbw_GBps, r.correct);
    }
  }
  if (!options.json && options.rounds > 1) print_ratios(rounds);
  bool ok = true;
  for (const auto& r : rows) ok &= r.correct;
  if (!options.plot.empty()) {
    std::vector<std::string> lines;
    lines.reserve(rows.size() + reference.size());
    for (const auto& r : rows) lines.push_back(to_json_line(r));
    for (const auto& r : reference) lines.push_back(to_json_line(r));
    ok &= plot_collectives(lines, options.plot);
  }
  return ok ? 0 : 1;
}

}  // namespace spmd::bench
