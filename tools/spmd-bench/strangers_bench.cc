// spmd-bench strangers (strangers_bench.h).
#include "spmd-bench/strangers_bench.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <spmd/spmd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <ctime>
#include <deque>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "common/subprocess.h"
#include "spmd-bench/workers.h"

namespace spmd::bench {
namespace {

using Clock = std::chrono::steady_clock;

double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// What runs beside the job: nothing, a thread that spins, or a thread that opens connections to
// the service's port as fast as it can, holding the newest `held`. Each reports its thread's CPU
// seconds and, for the flood, the connections it made.
class Load {
 public:
  // `duty`: the hog's share of each 10 ms that it spins (it sleeps the rest).
  Load(const std::string& kind, int port, int held, double duty) {
    if (kind == "quiet") return;
    thread_ = std::thread([this, kind, port, held, duty] {
      const double cpu0 = thread_cpu_seconds();
      const auto start = Clock::now();
      if (kind == "hog") {
        hog(duty);
      } else {
        flood(port, held);
      }
      cpu_ = thread_cpu_seconds() - cpu0;
      wall_ = std::chrono::duration<double>(Clock::now() - start).count();
    });
  }
  struct Used {
    double core_share = 0;  // of one core, over the load's life
    double per_second = 0;  // connections made
  };
  Used stop() {
    stop_ = true;
    if (!thread_.joinable()) return {};
    thread_.join();
    return {cpu_ / wall_, static_cast<double>(made_) / wall_};
  }

 private:
  void hog(double duty) {
    const auto period = std::chrono::milliseconds(10);
    volatile uint64_t x = 0;
    while (!stop_) {
      const auto busy_until = Clock::now() + std::chrono::duration<double>(period) * duty;
      while (Clock::now() < busy_until) x = x + 1;
      if (duty < 1) std::this_thread::sleep_for(std::chrono::duration<double>(period) * (1 - duty));
    }
  }

  void flood(int port, int held) {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    std::deque<int> open;
    while (!stop_) {
      const int fd = socket(AF_INET, SOCK_STREAM, 0);
      timeval limit{1, 0};  // connect() waits at most this (a paced service's full queue)
      setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof(limit));
      if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
        close(fd);  // not listening yet, or its queue is full
        continue;
      }
      ++made_;
      open.push_back(fd);
      if (open.size() > static_cast<size_t>(held)) {
        close(open.front());
        open.pop_front();
      }
    }
    for (int fd : open) close(fd);
  }

  std::thread thread_;
  std::atomic<bool> stop_{false};
  double cpu_ = 0;
  double wall_ = 1;
  int64_t made_ = 0;
};

struct Run {
  double rate = 0;        // steps per second
  double load_share = 0;  // of a core
  double made = 0;        // connections per second
};

Run run_job(const StrangersBenchOptions& o, const std::string& kind, double duty) {
  const int port = tools::free_port();
  Load load(kind, port, o.held, duty);
  std::vector<std::vector<std::string>> argvs;
  std::vector<EnvList> envs;
  for (int i = 0; i < o.processes; ++i) {
    argvs.push_back({(self_dir() / "spmd-bench").string(), "strangers-worker", "--seconds",
                     fmt::format("{}", o.seconds)});
    envs.push_back(spmd_worker_env(fmt::format("127.0.0.1:{}", port), o.processes, i));
  }
  const auto rows = run_workers(argvs, envs);
  const auto used = load.stop();
  Run r;
  r.load_share = used.core_share;
  r.made = used.per_second;
  if (!rows.empty()) {
    const auto row = nlohmann::json::parse(rows.front(), nullptr, false);
    if (row.is_object()) r.rate = row.value("steps_per_s", 0.0);
  }
  return r;
}

}  // namespace

int run_strangers_worker(const StrangersBenchOptions& options) {
  distributed::initialize();
  Communicator world = spmd::world();
  const auto start = Clock::now();
  const auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  int64_t steps = 0;
  bool correct = true;
  for (bool more = true; more; ++steps) {
    std::vector<float> values(64, 1.0F);
    values[0] = world.rank() == 0 && elapsed() < options.seconds ? 1.0F : 0.0F;
    world.all_reduce(values);
    more = values[0] > 0.5F;
    correct = correct && values[1] == static_cast<float>(world.size());
  }
  const double took = elapsed();
  print_row({{"steps", steps},
             {"seconds", took},
             {"steps_per_s", static_cast<double>(steps) / took},
             {"correct", correct}});
  distributed::shutdown();
  return correct ? 0 : 1;
}

int run_strangers_bench(const StrangersBenchOptions& o) {
  const std::vector<std::string> kinds = {"flood", "hog", "quiet"};
  std::map<std::string, std::vector<double>> rates;
  std::map<std::string, std::vector<double>> cpu_share;
  std::vector<double> made;
  // Each round runs the flood first, then a hog that spins for the share of a core the flood's
  // thread just used, then the job alone.
  for (int round = 0; round < o.rounds; ++round) {
    double flood_share = 1;
    for (const std::string& kind : kinds) {
      const Run r = run_job(o, kind, flood_share);
      if (r.rate == 0) {
        fmt::print(stderr, "strangers: the job under '{}' gave no row\n", kind);
        return 1;
      }
      rates[kind].push_back(r.rate);
      cpu_share[kind].push_back(r.load_share);
      if (kind == "flood") {
        made.push_back(r.made);
        flood_share = std::min(1.0, r.load_share);
      }
    }
  }
  nlohmann::ordered_json row = {
      {"processes", o.processes},
      {"seconds", o.seconds},
      {"rounds", o.rounds},
      {"quiet_steps_per_s", median(rates["quiet"])},
      {"hog_steps_per_s", median(rates["hog"])},
      {"flood_steps_per_s", median(rates["flood"])},
      {"flood_over_hog", median(rates["flood"]) / median(rates["hog"])},
      {"hog_cpu_share", median(cpu_share["hog"])},
      {"flood_cpu_share", median(cpu_share["flood"])},
      {"flood_connections_per_s", median(made)},
  };
  if (!o.json) {
    fmt::print("{}-process job, all_reduce of 64 floats per step, median of {} rounds:\n",
               o.processes, o.rounds);
  }
  fmt::print("{}\n", row.dump());
  return 0;
}

}  // namespace spmd::bench
