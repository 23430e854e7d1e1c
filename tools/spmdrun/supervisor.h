// spmdrun's job supervision: N children, their output prefixed by process index, and the rule
// that one failure stops all. Single-threaded; signals (SIGINT, SIGTERM, SIGCHLD) are turned
// into events on a self-pipe so nothing blocks without noticing them.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace spmd::tools {

struct JobOptions {
  int num_processes = 1;
  std::vector<std::string> command;  // program and its arguments
  // Per process i, the environment to add. Same size as num_processes.
  std::vector<std::vector<std::pair<std::string, std::string>>> env;
  // Whole-job wall-clock limit, counted from `started` (a restarted job's first attempt) or from
  // this job's start; zero means none.
  std::chrono::milliseconds timeout{0};
  std::optional<std::chrono::steady_clock::time_point> started;
  // After SIGTERM, how long a process may take to exit before SIGKILL.
  std::chrono::milliseconds grace{5000};
};

struct JobResult {
  // spmdrun's exit code: 0 when every process exits 0; the failed process's code (128 + signal
  // when killed) when one fails; 124 on timeout; 128 + signal when spmdrun itself is
  // interrupted.
  int code = 0;
  enum class Ended { kSucceeded, kFailed, kTimedOut, kInterrupted };
  Ended ended = Ended::kSucceeded;
  // Why the job was stopped (the line spmdrun printed), empty when it succeeded.
  std::string reason;
};

// Runs the job to its end.
JobResult run_job(const JobOptions& options);

}  // namespace spmd::tools
