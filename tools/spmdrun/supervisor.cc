#include "spmdrun/supervisor.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>

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

void install_signal_handlers() {
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

}  // namespace

int run_job(const JobOptions& options) {
  install_signal_handlers();
  std::vector<Proc> procs(static_cast<size_t>(options.num_processes));
  for (int i = 0; i < options.num_processes; ++i) {
    SpawnOptions so;
    so.argv = options.command;
    so.env = options.env[static_cast<size_t>(i)];
    so.pipe_output = true;
    Child c = spawn(so);
    Proc& p = procs[static_cast<size_t>(i)];
    p.index = i;
    p.pid = c.pid;
    p.out = {c.out_fd, STDOUT_FILENO, {}};
    p.err = {c.err_fd, STDERR_FILENO, {}};
  }

  const auto start = Clock::now();
  bool stopping = false;
  std::optional<Clock::time_point> kill_at;
  int result = 0;
  // Once every process has exited, grandchildren that inherited the pipes may keep them open;
  // their output is drained for this long, then abandoned.
  std::optional<Clock::time_point> drain_until;

  auto stop_all = [&](const std::string& why, int code) {
    if (stopping) return;
    stopping = true;
    result = code;
    say(why);
    for (auto& p : procs) {
      if (!p.status) kill(p.pid, SIGTERM);
    }
    kill_at = Clock::now() + options.grace;
  };

  while (true) {
    bool all_done = true;
    std::vector<pollfd> fds;
    std::vector<std::pair<Proc*, Stream*>> owners;
    for (auto& p : procs) {
      for (Stream* s : {&p.out, &p.err}) {
        if (s->fd >= 0) {
          fds.push_back({s->fd, POLLIN, 0});
          owners.emplace_back(&p, s);
        }
      }
      if (!p.status || p.out.fd >= 0 || p.err.fd >= 0) all_done = false;
    }
    if (all_done) break;
    bool all_exited = true;
    for (const auto& p : procs) all_exited = all_exited && p.status.has_value();
    if (all_exited && !drain_until) drain_until = Clock::now() + std::chrono::seconds(2);
    if (drain_until && Clock::now() >= *drain_until) {
      for (auto& p : procs) {
        for (Stream* s : {&p.out, &p.err}) {
          if (s->fd >= 0) {
            emit_lines(p, *s, true);
            close(s->fd);
            s->fd = -1;
          }
        }
      }
      continue;
    }
    fds.push_back({g_signal_pipe[0], POLLIN, 0});
    poll(fds.data(), fds.size(), 100);

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
    if (fds.back().revents & POLLIN) {
      char sigs[64];
      const ssize_t n = read(g_signal_pipe[0], sigs, sizeof(sigs));
      for (ssize_t i = 0; i < n; ++i) {
        const int sig = static_cast<unsigned char>(sigs[i]);
        if (sig == SIGINT || sig == SIGTERM) {
          if (stopping && sig == SIGINT) {
            kill_at = Clock::now();  // a second Ctrl-C: no more grace
          }
          stop_all(std::string("interrupted (") + strsignal(sig) + "); stopping all processes",
                   128 + sig);
        }
      }
    }

    // Reap. Within one sweep, a process that failed on its own is named before processes that
    // merely stopped because they heard of it (kPeerFailureExitCode).
    std::optional<size_t> first_failure;
    for (size_t i = 0; i < procs.size(); ++i) {
      Proc& p = procs[i];
      if (p.status) continue;
      p.status = try_wait(p.pid);
      if (!p.status || p.status->code == 0 || stopping) continue;
      const bool consequence =
          !p.status->signaled && p.status->code == distributed::kPeerFailureExitCode;
      if (!first_failure ||
          (!consequence &&
           procs[*first_failure].status->code == distributed::kPeerFailureExitCode &&
           !procs[*first_failure].status->signaled)) {
        first_failure = i;
      }
    }
    if (first_failure && !stopping) {
      const Proc& p = procs[*first_failure];
      int running = 0;
      for (const auto& q : procs) running += q.status ? 0 : 1;
      stop_all("process " + std::to_string(p.index) + " (pid " + std::to_string(p.pid) + ") " +
                   p.status->to_string() + "; stopping the " + std::to_string(running) +
                   " other running process" + (running == 1 ? "" : "es"),
               p.status->code);
    }
    if (!stopping && options.timeout.count() > 0 && Clock::now() - start > options.timeout) {
      char seconds[32];
      std::snprintf(seconds, sizeof(seconds), "%g",
                    std::chrono::duration<double>(options.timeout).count());
      stop_all(std::string("timeout of ") + seconds + " s reached; stopping all processes", 124);
    }
    if (kill_at && Clock::now() >= *kill_at) {
      for (auto& p : procs) {
        if (!p.status) {
          say("process " + std::to_string(p.index) + " (pid " + std::to_string(p.pid) +
              ") did not exit after SIGTERM; sending SIGKILL");
          kill(p.pid, SIGKILL);
        }
      }
      kill_at.reset();
    }
  }
  return result;
}

}  // namespace spmd::tools
