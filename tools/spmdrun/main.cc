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
//
//   spmdrun --status [--json] [PID]
//
// prints the live view of a running job (as spmd-status does): every spmdrun of this user
// leaves its job's address and token where this finds them (job_file.h). PID picks one job
// when several run.
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "common/subprocess.h"
#include "coord/status_query.h"
#include "spmd/error.h"
#include "spmdrun/job_file.h"
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

// spmdrun --status [--json] [PID]: the live view of this user's running job.
int print_status(const std::vector<std::string>& args) {
  bool json = false;
  int pid = 0;
  for (const std::string& a : args) {
    if (a == "--json") {
      json = true;
    } else if (!a.empty() && a.find_first_not_of("0123456789") == std::string::npos) {
      pid = std::stoi(a);
    } else {
      std::fprintf(stderr, "spmdrun: usage: spmdrun --status [--json] [PID]\n");
      return 2;
    }
  }
  std::vector<spmd::tools::RunningJob> jobs;
  try {
    jobs = spmd::tools::running_jobs();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "spmdrun: %s\n", e.what());
    return 1;
  }
  std::erase_if(jobs, [pid](const auto& j) { return pid != 0 && j.pid != pid; });
  if (jobs.size() != 1) {
    std::fprintf(stderr, "spmdrun: %s\n",
                 jobs.empty() ? "no running spmdrun job of this user found"
                              : "several jobs run; name one by its spmdrun pid:");
    for (const auto& j : jobs) std::fprintf(stderr, "  %d  %s\n", j.pid, j.address.c_str());
    return 1;
  }
  try {
    const auto table =
        spmd::query_status(jobs[0].address, jobs[0].token, std::chrono::milliseconds(5000));
    std::printf("job of spmdrun %d, coordinator %s\n", jobs[0].pid, jobs[0].address.c_str());
    std::fputs((json ? spmd::status_json(table) + "\n" : spmd::status_text(table)).c_str(), stdout);
    return 0;
  } catch (const spmd::Error& e) {
    std::fprintf(stderr, "spmdrun: %s\n", e.what());
    return 1;
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 2 && std::string(argv[1]) == "--status") {
    return print_status(std::vector<std::string>(argv + 2, argv + argc));
  }
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
      "or, with --max-restarts, starts the whole job again. --timeout bounds all attempts.\n"
      "spmdrun --status [--json] [PID] prints what every process of a running job is doing.");
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
  spmd::tools::JobFile job_file;
  for (int attempt = 0;; ++attempt) {
    // Each attempt is a new cluster: a new service, on a new free port unless --port.
    const int attempt_port = port != 0 ? port : spmd::tools::free_port();
    job_file.publish("127.0.0.1:" + std::to_string(attempt_port), token);
    spmd::tools::JobOptions job = job_options(n, cpu_devices, attempt_port, token, attempt);
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
