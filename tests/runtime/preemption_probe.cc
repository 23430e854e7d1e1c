// multihost::reached_preemption_sync_point across real processes (spmdrun) and alone.
//
//   preemption_probe cluster   the last process SIGTERMs itself at step 7 of a lockstep loop;
//                              every process must return true at one and the same step, after 7
//   preemption_probe alone     no cluster: true at the step after the signal, the same answer
//                              twice for one step; a program that never asks still dies of
//                              SIGTERM; a second SIGTERM ends one that asked
//
// Prints "ok …" lines; any failure prints "error …" and exits 1.
#include <spmd/spmd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

[[noreturn]] void fail(const std::string& why) {
  std::printf("error %s\n", why.c_str());
  std::fflush(stdout);
  std::exit(1);
}

int cluster() {
  spmd::distributed::initialize();
  const int last = spmd::process_count() - 1;
  int64_t agreed = -1;
  for (int64_t step = 0; step < 1000 && agreed < 0; ++step) {
    // The step's work: one collective across every process (lockstep).
    spmd::multihost::process_allgather(
        spmd::HostArray::from_vector(std::vector<int64_t>{step}, {1}));
    if (spmd::process_index() == last && step == 7) std::raise(SIGTERM);
    if (spmd::multihost::reached_preemption_sync_point(step)) agreed = step;
  }
  if (agreed <= 7) fail("no sync step after the signal at step 7: " + std::to_string(agreed));
  const auto all = spmd::multihost::process_allgather(
      spmd::HostArray::from_vector(std::vector<int64_t>{agreed}, {1}));
  for (int64_t s : all.data<int64_t>()) {
    if (s != agreed) fail("processes disagree on the sync step");
  }
  std::printf("ok every process agreed on preemption step %lld\n", static_cast<long long>(agreed));
  spmd::distributed::shutdown();
  return 0;
}

// Runs `body` in a child process; returns its wait status.
template <class Body>
int in_child(const Body& body) {
  std::fflush(stdout);
  const pid_t pid = fork();
  if (pid == 0) {
    body();
    std::_Exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return status;
}

int alone() {
  const int unaware = in_child([] { std::raise(SIGTERM); });
  if (!WIFSIGNALED(unaware) || WTERMSIG(unaware) != SIGTERM) {
    fail("a program that never asked about preemption survived SIGTERM");
  }
  std::printf("ok a program that never asks still dies of SIGTERM\n");
  const int twice = in_child([] {
    spmd::multihost::reached_preemption_sync_point(0);
    std::raise(SIGTERM);
    std::raise(SIGTERM);
  });
  if (!WIFSIGNALED(twice) || WTERMSIG(twice) != SIGTERM) fail("a second SIGTERM did not end it");
  std::printf("ok a second SIGTERM ends the process\n");
  for (int64_t step = 0; step < 10; ++step) {
    if (step == 3) std::raise(SIGTERM);
    const bool first = spmd::multihost::reached_preemption_sync_point(step);
    if (first != spmd::multihost::reached_preemption_sync_point(step)) fail("answers differ");
    if (first != (step == 4)) fail("alone, step " + std::to_string(step) + " answered wrongly");
    if (first) break;
  }
  std::printf("ok alone, the sync step is the one after the signal\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  try {
    if (mode == "cluster") return cluster();
    if (mode == "alone") return alone();
  } catch (const std::exception& e) {
    fail(e.what());
  }
  fail("usage: preemption_probe cluster|alone");
}
