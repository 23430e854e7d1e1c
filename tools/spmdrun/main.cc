// spmdrun: starts N processes of one program on this machine as one spmd cluster.
//
//   spmdrun -n 4 --cpu-devices 2 -- ./prog args...
//
// Each process gets SPMD_COORDINATOR_ADDRESS (127.0.0.1 and a free port unless --port),
// SPMD_NUM_PROCESSES, SPMD_PROCESS_ID, SPMD_LOCAL_PROCESS_ID, SPMD_COORDINATOR_BIND_ADDRESS,
// SPMD_AUTH_TOKEN (random per job unless --auth-token), SPMD_RESTART_COUNT and, with
// --cpu-devices, SPMD_CPU_DEVICES, so spmd::distributed::initialize() needs no arguments.
//
// --max-restarts N: when a process fails, the whole job is stopped and started again (a new
// cluster, on a new port), up to N times, as torchrun's --max-restarts; the program resumes from
// its checkpoints (CheckpointManager::latest_step()). A timeout or Ctrl-C is not restarted.
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "common/subprocess.h"
#include "spmdrun/supervisor.h"

namespace {

std::string random_token() {
  std::ifstream in("/dev/urandom", std::ios::binary);
  unsigned char bytes[16] = {};
  in.read(reinterpret_cast<char*>(bytes), sizeof(bytes));
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (unsigned char b : bytes) {
    out += hex[b >> 4];
    out += hex[b & 15];
  }
  return out;
}

// The job of `n` processes: each process's environment for cluster attempt `attempt`.
spmd::tools::JobOptions job_options(int n, int cpu_devices, int port, const std::string& token,
                                    int attempt) {
  const std::string address = "127.0.0.1:" + std::to_string(port);
  spmd::tools::JobOptions job;
  job.num_processes = n;
  for (int i = 0; i < n; ++i) {
    std::vector<std::pair<std::string, std::string>> env = {
        {"SPMD_COORDINATOR_ADDRESS", address},           {"SPMD_COORDINATOR_BIND_ADDRESS", address},
        {"SPMD_NUM_PROCESSES", std::to_string(n)},       {"SPMD_PROCESS_ID", std::to_string(i)},
        {"SPMD_LOCAL_PROCESS_ID", std::to_string(i)},    {"SPMD_AUTH_TOKEN", token},
        {"SPMD_RESTART_COUNT", std::to_string(attempt)},
    };
    if (cpu_devices > 0) env.emplace_back("SPMD_CPU_DEVICES", std::to_string(cpu_devices));
    job.env.push_back(std::move(env));
  }
  return job;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"spmdrun: run N processes of one program as an spmd cluster on this machine"};
  int n = 0;
  int cpu_devices = 0;
  int port = 0;
  double timeout_s = 0;
  double grace_s = 5;
  std::string token;
  int max_restarts = 0;
  app.add_option("-n,--processes", n, "number of processes")
      ->required()
      ->check(CLI::Range(1, 4096));
  app.add_option("--cpu-devices", cpu_devices, "CPU devices per process (SPMD_CPU_DEVICES)")
      ->check(CLI::Range(1, 1024));
  app.add_option("--port", port, "coordinator port (default: a free one)")
      ->check(CLI::Range(1, 65535));
  app.add_option("--timeout", timeout_s,
                 "stop every process and exit 124 after this many seconds (default: none)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--grace", grace_s, "seconds between SIGTERM and SIGKILL when stopping (5)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--auth-token", token, "shared secret (default: random per job)");
  app.add_option("--max-restarts", max_restarts,
                 "after a failure, stop the whole job and start it again, up to this many times "
                 "(SPMD_RESTART_COUNT tells the processes which attempt they are; default 0)")
      ->check(CLI::Range(0, 1000));
  app.prefix_command();
  app.footer(
      "Usage: spmdrun -n N [options] [--] PROGRAM ARGS...\n"
      "Output lines are prefixed with the process index. When one process fails, the others get\n"
      "SIGTERM (then SIGKILL after --grace) and spmdrun exits with the failed process's code,\n"
      "or, with --max-restarts, starts the whole job again. --timeout bounds all attempts.");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  std::vector<std::string> command = app.remaining();
  if (!command.empty() && command.front() == "--") command.erase(command.begin());
  if (command.empty()) {
    std::fprintf(stderr,
                 "spmdrun: no program given. Usage: spmdrun -n N [options] -- PROGRAM ARGS...\n");
    return 2;
  }
  if (token.empty()) token = random_token();
  const auto started = std::chrono::steady_clock::now();
  for (int attempt = 0;; ++attempt) {
    // Each attempt is a new cluster: a new service, on a new free port unless --port.
    spmd::tools::JobOptions job =
        job_options(n, cpu_devices, port != 0 ? port : spmd::tools::free_port(), token, attempt);
    job.command = command;
    job.grace = std::chrono::milliseconds(static_cast<int64_t>(grace_s * 1000));
    job.timeout = std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000));
    job.started = started;  // --timeout bounds every attempt together
    spmd::tools::JobResult result;
    try {
      result = spmd::tools::run_job(job);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "spmdrun: %s\n", e.what());
      return 1;
    }
    if (result.ended != spmd::tools::JobResult::Ended::kFailed || attempt >= max_restarts) {
      return result.code;
    }
    std::fprintf(stderr, "spmdrun: restarting the job (restart %d of %d) after: %s\n", attempt + 1,
                 max_restarts, result.reason.c_str());
  }
}
