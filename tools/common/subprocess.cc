#include "common/subprocess.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>

extern char** environ;

namespace spmd::tools {

using Clock = std::chrono::steady_clock;

Child spawn(const SpawnOptions& options) {
  if (options.argv.empty()) throw std::runtime_error("spawn: empty command");
  int out[2] = {-1, -1};
  int err[2] = {-1, -1};
  int in[2] = {-1, -1};
  if (options.pipe_input && pipe2(in, O_CLOEXEC) != 0) {
    throw std::runtime_error(std::strerror(errno));
  }
  if (options.pipe_output) {
    if (pipe2(out, O_CLOEXEC) != 0) throw std::runtime_error(std::strerror(errno));
    const bool own_err_pipe = !options.merge_stderr && !options.inherit_stderr;
    if (own_err_pipe && pipe2(err, O_CLOEXEC) != 0) {
      throw std::runtime_error(std::strerror(errno));
    }
  }
  // Everything the child needs is prepared before fork: only async-signal-safe calls follow.
  std::vector<char*> argv;
  for (const auto& a : options.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  // The child's whole environment, built here because only async-signal-safe calls may follow
  // fork in a threaded program.
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    const std::string name = entry.substr(0, entry.find('='));
    bool drop = false;
    for (const auto& u : options.unset_env) drop = drop || u == name;
    for (const auto& kv : options.env) drop = drop || kv.first == name;
    if (!drop) env_strings.push_back(entry);
  }
  for (const auto& [k, v] : options.env)
    env_strings.push_back(std::string(k).append("=").append(v));
  std::vector<char*> envp;
  envp.reserve(env_strings.size() + 1);
  for (auto& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    if (options.die_with_parent) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() != parent) _exit(127);
    }
    if (options.new_process_group) setpgid(0, 0);
    if (options.pipe_input) dup2(in[0], STDIN_FILENO);
    if (options.pipe_output) {
      dup2(out[1], STDOUT_FILENO);
      if (!options.inherit_stderr) dup2(options.merge_stderr ? out[1] : err[1], STDERR_FILENO);
    }
    // Children start with default signal dispositions, whatever the launcher installed.
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGPIPE, SIG_DFL);
    execvpe(argv[0], argv.data(), envp.data());
    const std::string msg =
        std::string("cannot execute '") + argv[0] + "': " + std::strerror(errno) + "\n";
    [[maybe_unused]] auto n = write(STDERR_FILENO, msg.data(), msg.size());
    _exit(127);
  }
  Child child;
  child.pid = pid;
  if (options.pipe_input) {
    close(in[0]);
    child.in_fd = in[1];
  }
  if (options.pipe_output) {
    close(out[1]);
    child.out_fd = out[0];
    if (err[1] >= 0) {
      close(err[1]);
      child.err_fd = err[0];
    }
  }
  return child;
}

std::string ExitStatus::to_string() const {
  if (!signaled) return "exited with code " + std::to_string(code);
  std::string out = "was killed by signal " + std::to_string(signal);
  out.append(" (").append(strsignal(signal)).append(")");
  return out;
}

namespace {
ExitStatus decode(int status) {
  ExitStatus s;
  if (WIFSIGNALED(status)) {
    s.signaled = true;
    s.signal = WTERMSIG(status);
    s.code = 128 + s.signal;
  } else {
    s.code = WEXITSTATUS(status);
  }
  return s;
}
}  // namespace

std::optional<ExitStatus> try_wait(pid_t pid) {
  int status = 0;
  const pid_t r = waitpid(pid, &status, WNOHANG);
  if (r == pid) return decode(status);
  if (r < 0 && errno == ECHILD) return ExitStatus{127, false, 0};
  return std::nullopt;
}

std::optional<ExitStatus> wait_or_kill(pid_t pid, std::chrono::milliseconds timeout, bool group) {
  const auto deadline = Clock::now() + timeout;
  while (Clock::now() < deadline) {
    if (auto s = try_wait(pid)) return s;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  kill(group ? -pid : pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  return std::nullopt;
}

namespace {

// The lowest port of the kernel's ephemeral range (ports for bind(0) and connect()).
int ephemeral_low() {
  int low = 32768;
  int high = 60999;
  if (FILE* f = std::fopen("/proc/sys/net/ipv4/ip_local_port_range", "r")) {
    if (std::fscanf(f, "%d %d", &low, &high) != 2) low = 32768;
    std::fclose(f);
  }
  return low;
}

// Whether `port` can be bound on every IPv4 interface now (with SO_REUSEADDR, as the service
// binds it).
bool bindable(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::runtime_error(std::string("socket: ") + std::strerror(errno));
  const int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_ANY);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  const bool ok = bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  close(fd);
  return ok;
}

constexpr int kLowestPort = 10000;

// A port handed out by free_port() stays this process's until it exits: an exclusive flock on
// <temp>/spmd-free-ports/<port>, held by a descriptor never closed (and not inherited). Another
// process's free_port() skips a locked port, so tests running at once never pick the same one
// (at random alone, 30 concurrent tests collided about once in fifty runs). The kernel drops
// the lock when the process ends, however it ends. Where the folder cannot be used (another
// user's, read-only), ports are picked without the reservation, as before.
bool reserve(int port) {
  static const std::string folder = [] {
    std::error_code ec;
    const auto dir = std::filesystem::temp_directory_path(ec) / "spmd-free-ports";
    if (ec) return std::string();
    std::filesystem::create_directories(dir, ec);
    std::filesystem::permissions(dir, std::filesystem::perms::all, ec);  // every user's tests
    return dir.string();
  }();
  if (folder.empty()) return true;
  const std::string path = folder + "/" + std::to_string(port);
  // Read-only: flock needs no more, so another user's lock file (umask-limited) serves too.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CREAT | O_CLOEXEC, 0666);
  if (fd < 0) return true;  // not ours to use: no reservation
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd);
    return false;  // another live process holds it
  }
  return true;  // fd stays open, and the lock with it, until this process exits
}

}  // namespace

int free_port() {
  const int low = ephemeral_low();
  if (low <= kLowestPort + 1)
    throw std::runtime_error("free_port: no ports below the ephemeral range");
  std::random_device seed;
  std::mt19937 gen(seed());
  std::uniform_int_distribution<int> pick(kLowestPort, low - 1);
  for (int attempt = 0; attempt < 200; ++attempt) {
    const int port = pick(gen);
    if (bindable(port) && reserve(port)) return port;
  }
  throw std::runtime_error("free_port: no free port found below the ephemeral range");
}

std::string read_all(int fd, std::chrono::milliseconds timeout) {
  std::string out;
  const auto deadline = Clock::now() + timeout;
  char buf[4096];
  while (true) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) break;
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left.count())) <= 0) break;
    const ssize_t n = read(fd, buf, sizeof(buf));
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return out;
}

}  // namespace spmd::tools
