// Starting and watching child processes, for spmdrun, spmd-bench and the multi-process tests.
// Only processes started here are ever signalled, and only by pid.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace spmd::tools {

struct SpawnOptions {
  std::vector<std::string> argv;  // argv[0] is looked up in PATH
  // Added to (or replacing in) the parent's environment.
  std::vector<std::pair<std::string, std::string>> env;
  // Removed from the child's environment (before `env` is applied).
  std::vector<std::string> unset_env;
  // Give the child pipes for stdout and stderr (read them from Child::out_fd / err_fd);
  // otherwise it inherits the parent's.
  bool pipe_output = false;
  // Merge stderr into the stdout pipe (with pipe_output).
  bool merge_stderr = false;
  // Pipe stdout only; stderr stays the parent's (with pipe_output, not merge_stderr).
  bool inherit_stderr = false;
  // Give the child a pipe for stdin (write to it through Child::in_fd); otherwise it inherits
  // the parent's.
  bool pipe_input = false;
  // The child gets SIGKILL when the parent dies, so no orphan outlives a killed launcher.
  bool die_with_parent = true;
  // The child leads a new process group (its pid), so everything it starts can be signalled
  // together with kill(-pid, …) — only processes that descend from this spawn.
  bool new_process_group = false;
};

struct Child {
  pid_t pid = -1;
  int in_fd = -1;   // -1 unless pipe_input
  int out_fd = -1;  // -1 unless pipe_output
  int err_fd = -1;  // -1 unless pipe_output and neither merge_stderr nor inherit_stderr
};

// Starts the child. Throws std::runtime_error when fork or pipe fail; a program that cannot be
// executed exits 127 after printing why on its stderr.
Child spawn(const SpawnOptions& options);

// How a child ended: exit code, or 128 + signal number (shell convention).
struct ExitStatus {
  int code = 0;
  bool signaled = false;
  int signal = 0;
  std::string to_string() const;  // "exited with code 3" / "was killed by signal 9 (Killed)"
};

// Reaps `pid` if it has ended; nullopt while it runs.
std::optional<ExitStatus> try_wait(pid_t pid);

// Waits for `pid` until `timeout`; on timeout sends SIGKILL (to its whole process group when
// `group` — it must lead one, see SpawnOptions::new_process_group), reaps it and returns nullopt.
std::optional<ExitStatus> wait_or_kill(pid_t pid, std::chrono::milliseconds timeout,
                                       bool group = false);

// A TCP port that can be bound a moment ago, chosen at random below the kernel's ephemeral range
// (ip_local_port_range, 32768 and up by default). Ports in that range are what bind(0) and every
// connect() take, so handing one of them out (bind to port 0, release, pass it on) races with
// every connection a parallel test suite or a busy host opens before the port is bound again;
// below the range only another explicit choice can collide, and this one reserves the port for
// the calling process's life (a lock file under the temporary folder, "spmd-free-ports"), so
// other processes' free_port() (tests running at once) skip it. Throws std::runtime_error when
// none is found.
int free_port();

// Reads everything from `fd` until EOF or `timeout`, then closes it.
std::string read_all(int fd, std::chrono::milliseconds timeout);

}  // namespace spmd::tools
