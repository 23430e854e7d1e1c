#include "spmdrun/supervisor.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <optional>
#include <string>
#include <utility>

#include "comm/shm_segment.h"
#include "common/subprocess.h"
#include "spmd/distributed.h"

namespace spmd::tools {
namespace {

using Clock = std::chrono::steady_clock;

int g_signal_pipe[2] = {-1, -1};

void on_signal(int sig) {
  const int saved = errno;
  const char c = static_cast<char>(sig);
  [[maybe_unused]] auto n = write(g_signal_pipe[1], &c, 1);
  errno = saved;
}

// Once per spmdrun: a restarted job keeps the pipe and the handlers.
void install_signal_handlers() {
  if (g_signal_pipe[0] >= 0) return;
  if (pipe2(g_signal_pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
    throw std::runtime_error("spmdrun: cannot create the signal pipe");
  }
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGCHLD, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);
}

void write_all(int fd, const std::string& s) {
  size_t off = 0;
  while (off < s.size()) {
    const ssize_t n = write(fd, s.data() + off, s.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    off += static_cast<size_t>(n);
  }
}

// One output stream of one child, cut into prefixed lines.
struct Stream {
  int fd = -1;
  int target = STDOUT_FILENO;
  std::string partial;
};

struct Proc {
  int index = 0;
  pid_t pid = -1;
  Stream out;
  Stream err;
  std::optional<ExitStatus> status;
};

void emit_lines(const Proc& p, Stream& s, bool at_eof) {
  const std::string prefix = "[" + std::to_string(p.index) + "] ";
  size_t start = 0;
  std::string out;
  while (true) {
    const size_t nl = s.partial.find('\n', start);
    if (nl == std::string::npos) break;
    out += prefix;
    out.append(s.partial, start, nl - start + 1);
    start = nl + 1;
  }
  s.partial.erase(0, start);
  if (at_eof && !s.partial.empty()) {
    out += prefix + s.partial + "\n";
    s.partial.clear();
  }
  if (!out.empty()) write_all(s.target, out);
}

void say(const std::string& line) { write_all(STDERR_FILENO, "spmdrun: " + line + "\n"); }

// One job: its processes, their output relayed line by line, and the decisions to stop them.
class Supervisor {
 public:
  explicit Supervisor(const JobOptions& options) : options_(options) {}

  JobResult run() {
    install_signal_handlers();
    start();
    while (true) {
      std::vector<pollfd> fds;
      std::vector<std::pair<Proc*, Stream*>> owners;
      if (finished(fds, owners)) break;
      if (drain_deadline_passed()) continue;
      fds.push_back({g_signal_pipe[0], POLLIN, 0});
      poll(fds.data(), fds.size(), 100);
      pump_output(fds, owners);
      if (fds.back().revents & POLLIN) handle_signals();
      reap();
      check_timeout();
      escalate();
    }
    return result_;
  }

 private:
  void start() {
    procs_.resize(static_cast<size_t>(options_.num_processes));
    for (int i = 0; i < options_.num_processes; ++i) {
      SpawnOptions so;
      so.argv = options_.command;
      so.env = options_.env[static_cast<size_t>(i)];
      so.pipe_output = true;
      Child c = spawn(so);
      Proc& p = procs_[static_cast<size_t>(i)];
      p.index = i;
      p.pid = c.pid;
      p.out = {c.out_fd, STDOUT_FILENO, {}};
      p.err = {c.err_fd, STDERR_FILENO, {}};
    }
    start_ = options_.started.value_or(Clock::now());
  }

  void stop_all(const std::string& why, int code, JobResult::Ended ended) {
    if (stopping_) return;
    stopping_ = true;
    result_ = {code, ended, why};
    say(why);
    for (auto& p : procs_) {
      if (!p.status) kill(p.pid, SIGTERM);
    }
    kill_at_ = Clock::now() + options_.grace;
  }

  // Collects the open output pipes; true once every process has exited and its pipes closed.
  bool finished(std::vector<pollfd>& fds, std::vector<std::pair<Proc*, Stream*>>& owners) {
    bool all_done = true;
    bool all_exited = true;
    for (auto& p : procs_) {
      for (Stream* s : {&p.out, &p.err}) {
        if (s->fd >= 0) {
          fds.push_back({s->fd, POLLIN, 0});
          owners.emplace_back(&p, s);
        }
      }
      if (!p.status || p.out.fd >= 0 || p.err.fd >= 0) all_done = false;
      all_exited = all_exited && p.status.has_value();
    }
    if (all_exited && !drain_until_) drain_until_ = Clock::now() + kDrainAfterExit;
    return all_done;
  }

  // Once every process has exited, grandchildren that inherited the pipes may keep them open:
  // their output is drained for kDrainAfterExit, then abandoned (true when that happened now).
  bool drain_deadline_passed() {
    if (!drain_until_ || Clock::now() < *drain_until_) return false;
    for (auto& p : procs_) {
      for (Stream* s : {&p.out, &p.err}) {
        if (s->fd < 0) continue;
        emit_lines(p, *s, true);
        close(s->fd);
        s->fd = -1;
      }
    }
    return true;
  }

  void pump_output(const std::vector<pollfd>& fds,
                   const std::vector<std::pair<Proc*, Stream*>>& owners) {
    for (size_t i = 0; i + 1 < fds.size(); ++i) {
      if ((fds[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
      auto [p, s] = owners[i];
      char buf[65536];
      const ssize_t n = read(s->fd, buf, sizeof(buf));
      if (n > 0) {
        s->partial.append(buf, static_cast<size_t>(n));
        emit_lines(*p, *s, false);
      } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
        emit_lines(*p, *s, true);
        close(s->fd);
        s->fd = -1;
      }
    }
  }

  void handle_signals() {
    char sigs[64];
    const ssize_t n = read(g_signal_pipe[0], sigs, sizeof(sigs));
    for (ssize_t i = 0; i < n; ++i) {
      const int sig = static_cast<unsigned char>(sigs[i]);
      if (sig != SIGINT && sig != SIGTERM) continue;
      if (stopping_ && sig == SIGINT) kill_at_ = Clock::now();  // a second Ctrl-C: no grace
      stop_all(std::string("interrupted (") + strsignal(sig) + "); stopping all processes",
               128 + sig, JobResult::Ended::kInterrupted);
    }
  }

  // Reaps what exited, and stops the job at the first failure, naming its root cause: a process
  // that failed on its own is named before processes that merely stopped because they heard of
  // a failure (kPeerFailureExitCode). Those can exit before the failed process is reaped (its
  // SIGKILL and their exit race), so when only they have failed, the stop waits up to
  // kRootCauseWait for the process that caused it.
  void reap() {
    for (size_t i = 0; i < procs_.size(); ++i) {
      Proc& p = procs_[i];
      if (p.status) continue;
      p.status = try_wait(p.pid);
      // A process killed, or ended without its destructors, may have left shared-memory names.
      if (p.status && p.status->code != 0) ShmSegment::unlink_left_by(p.pid);
      if (!p.status || p.status->code == 0 || stopping_) continue;
      if (!is_consequence(*p.status)) {
        if (!root_cause_) root_cause_ = i;
      } else if (!first_consequence_) {
        first_consequence_ = {i, Clock::now()};
      }
    }
    if (stopping_) return;
    if (root_cause_) {
      stop_for(*root_cause_, "");
      return;
    }
    if (!first_consequence_) return;
    // A peer frozen (SIGSTOP, a debugger) never exits: the others stopped because of it.
    for (const Proc& p : procs_) {
      if (!p.status && is_stopped(p.pid)) {
        stop_frozen(p, procs_[first_consequence_->first]);
        return;
      }
    }
    const bool all_exited =
        std::all_of(procs_.begin(), procs_.end(), [](const Proc& p) { return p.status; });
    if (all_exited || Clock::now() - first_consequence_->second >= kRootCauseWait) {
      stop_for(first_consequence_->first,
               " (it stopped because another process failed; its "
               "message above names that process)");
    }
  }

  // True when `pid` is stopped (state T or t in /proc/<pid>/stat).
  static bool is_stopped(pid_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string stat;
    std::getline(in, stat);
    const size_t close = stat.rfind(')');  // the command name may hold spaces and parentheses
    return close != std::string::npos && close + 2 < stat.size() &&
           (stat[close + 2] == 'T' || stat[close + 2] == 't');
  }

  void stop_frozen(const Proc& frozen, const Proc& witness) {
    stop_all("process " + std::to_string(frozen.index) + " (pid " + std::to_string(frozen.pid) +
                 ") is stopped (SIGSTOP or a debugger) and no longer takes part; process " +
                 std::to_string(witness.index) + " " + witness.status->to_string() +
                 " because of it; stopping the " + still_running("running"),
             witness.status->code, JobResult::Ended::kFailed);
  }

  // "2 <adjective> processes": those not yet exited, which stop_all is about to stop.
  std::string still_running(const std::string& adjective) const {
    int running = 0;
    for (const auto& q : procs_) running += q.status ? 0 : 1;
    return std::to_string(running) + " " + adjective + " process" + (running == 1 ? "" : "es");
  }

  static bool is_consequence(const ExitStatus& st) {
    return !st.signaled && st.code == distributed::kPeerFailureExitCode;
  }

  void stop_for(size_t i, const std::string& note) {
    const Proc& p = procs_[i];
    stop_all("process " + std::to_string(p.index) + " (pid " + std::to_string(p.pid) + ") " +
                 p.status->to_string() + note + "; stopping the " + still_running("other running"),
             p.status->code, JobResult::Ended::kFailed);
  }

  void check_timeout() {
    if (stopping_ || options_.timeout.count() <= 0 || Clock::now() - start_ <= options_.timeout) {
      return;
    }
    char seconds[32];
    std::snprintf(seconds, sizeof(seconds), "%g",
                  std::chrono::duration<double>(options_.timeout).count());
    stop_all(std::string("timeout of ") + seconds + " s reached; stopping all processes", 124,
             JobResult::Ended::kTimedOut);
  }

  // SIGKILL for what is still running once the grace after SIGTERM is over.
  void escalate() {
    if (!kill_at_ || Clock::now() < *kill_at_) return;
    for (auto& p : procs_) {
      if (p.status) continue;
      say("process " + std::to_string(p.index) + " (pid " + std::to_string(p.pid) +
          ") did not exit after SIGTERM; sending SIGKILL");
      kill(p.pid, SIGKILL);
    }
    kill_at_.reset();
  }

  static constexpr std::chrono::seconds kDrainAfterExit{2};
  // How long processes that stopped because of a peer's failure wait for that peer to be reaped
  // before spmdrun names one of them instead (a peer that is frozen, not dead, never exits).
  static constexpr std::chrono::seconds kRootCauseWait{2};

  const JobOptions& options_;
  std::vector<Proc> procs_;
  Clock::time_point start_;
  bool stopping_ = false;
  std::optional<Clock::time_point> kill_at_;
  JobResult result_;
  std::optional<Clock::time_point> drain_until_;
  std::optional<size_t> root_cause_;
  std::optional<std::pair<size_t, Clock::time_point>> first_consequence_;
};

}  // namespace

JobResult run_job(const JobOptions& options) { return Supervisor(options).run(); }

}  // namespace spmd::tools
