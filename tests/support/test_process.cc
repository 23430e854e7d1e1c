#include "support/test_process.h"

#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <cstdlib>

extern char** environ;

namespace spmd::testing {

using Clock = std::chrono::steady_clock;

TestProcess::TestProcess(std::vector<std::string> argv, Env env) {
  tools::SpawnOptions so;
  so.argv = std::move(argv);
  so.env = std::move(env);
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    if (entry.rfind("SPMD_", 0) == 0) so.unset_env.push_back(entry.substr(0, entry.find('=')));
  }
  so.pipe_output = true;
  so.merge_stderr = true;
  so.new_process_group = true;
  const tools::Child child = tools::spawn(so);
  pid_ = child.pid;
  reader_ = std::thread([this, fd = child.out_fd] {
    char buf[4096];
    // Polls so that the destructor can stop it even if a leftover process holds the pipe.
    while (!stop_reading_) {
      pollfd p{fd, POLLIN, 0};
      if (poll(&p, 1, 100) <= 0) continue;
      const ssize_t n = read(fd, buf, sizeof(buf));
      if (n <= 0) break;
      std::lock_guard lock(mu_);
      output_.append(buf, static_cast<size_t>(n));
      cv_.notify_all();
    }
    close(fd);
    std::lock_guard lock(mu_);
    eof_ = true;
    cv_.notify_all();
  });
}

TestProcess::~TestProcess() {
  if (!status_) wait(std::chrono::milliseconds(0));
  kill(-pid_, SIGKILL);  // anything the process started and left running
  stop_reading_ = true;
  if (reader_.joinable()) reader_.join();
}

bool TestProcess::wait_for_output(const std::string& text, std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  return cv_.wait_for(lock, timeout, [&] {
    return output_.find(text) != std::string::npos || eof_;
  }) && output_.find(text) != std::string::npos;
}

std::optional<tools::ExitStatus> TestProcess::wait(std::chrono::milliseconds timeout) {
  if (status_) return status_;
  auto s = tools::wait_or_kill(pid_, timeout, /*group=*/true);
  status_ = s ? *s : tools::ExitStatus{137, true, SIGKILL};
  // The pipe closes with the process (and any child it left holding it is its own business);
  // give the reader a moment to drain.
  std::unique_lock lock(mu_);
  cv_.wait_for(lock, std::chrono::seconds(2), [&] { return eof_; });
  return s;
}

std::string TestProcess::output() const {
  std::lock_guard lock(mu_);
  return output_;
}

}  // namespace spmd::testing
