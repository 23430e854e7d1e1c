// A child process under test: its output (stdout and stderr merged) is collected on a thread of
// its own, every wait has a deadline, and the destructor kills it if it still runs. It leads a
// process group of its own, so whatever it started (a launcher's processes) is killed with it
// and no test leaves processes behind or waits on a pipe they hold.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "common/subprocess.h"

namespace spmd::testing {

class TestProcess {
 public:
  using Env = std::vector<std::pair<std::string, std::string>>;

  // Starts `argv` with `env` added to this process's environment, minus every SPMD_* variable
  // the test runner may have inherited, so only what the test sets counts.
  explicit TestProcess(std::vector<std::string> argv, Env env = {});
  ~TestProcess();
  TestProcess(const TestProcess&) = delete;
  TestProcess& operator=(const TestProcess&) = delete;

  pid_t pid() const { return pid_; }

  // Waits until the output contains `text`; false when `timeout` passes first.
  bool wait_for_output(const std::string& text, std::chrono::milliseconds timeout);

  // Waits for the process to end; on timeout kills it and returns nullopt.
  std::optional<tools::ExitStatus> wait(std::chrono::milliseconds timeout);

  // Everything printed so far.
  std::string output() const;

 private:
  pid_t pid_ = -1;
  std::optional<tools::ExitStatus> status_;
  std::thread reader_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::string output_;
  bool eof_ = false;
  std::atomic<bool> stop_reading_{false};
};

}  // namespace spmd::testing
