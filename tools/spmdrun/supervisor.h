// spmdrun's job supervision: N children, their output prefixed by process index, and the rule
// that one failure stops all. Single-threaded; signals (SIGINT, SIGTERM, SIGCHLD) are turned
// into events on a self-pipe so nothing blocks without noticing them.
#pragma once

#include <chrono>
#include <string>
#include <utility>
#include <vector>

namespace spmd::tools {

struct JobOptions {
  int num_processes = 1;
  std::vector<std::string> command;  // program and its arguments
  // Per process i, the environment to add. Same size as num_processes.
  std::vector<std::vector<std::pair<std::string, std::string>>> env;
  // Whole-job wall-clock limit; zero means none.
  std::chrono::milliseconds timeout{0};
  // After SIGTERM, how long a process may take to exit before SIGKILL.
  std::chrono::milliseconds grace{5000};
};

// Runs the job to its end and returns spmdrun's exit code: 0 when every process exits 0; the
// failed process's code (128 + signal when killed) when one fails; 124 on timeout; 128 + signal
// when spmdrun itself is interrupted.
int run_job(const JobOptions& options);

}  // namespace spmd::tools
