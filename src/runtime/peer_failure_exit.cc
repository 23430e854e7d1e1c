#include "runtime/peer_failure_exit.h"

#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <string>
#include <thread>

#include "coord/service.h"
#include "runtime/fast_exit.h"
#include "spmd/distributed.h"
#include "spmd/error.h"

namespace spmd {
namespace {

using Clock = std::chrono::steady_clock;

// How long the process hosting the service lingers after hearing of a failure, so the notice
// reaches every other process before its exit resets their connections (a reset makes the
// kernel drop data not yet read, and they would blame the service instead of the dead process).
constexpr std::chrono::milliseconds kNoticeFlushTimeout(1000);
// How long an uncaught PeerFailure waits for the io thread: its flush, and a little more for a
// service notice when only the data plane saw the death.
constexpr std::chrono::milliseconds kUncaughtWait = kNoticeFlushTimeout + std::chrono::seconds(2);

std::atomic<bool> g_armed{false};
std::atomic<int> g_self{-1};
std::terminate_handler g_previous_terminate = nullptr;

void write_stop_line(int self, const std::string& why) {
  const std::string line = fmt::format("spmd: process {} stops: {} (exit code {})\n", self, why,
                                       distributed::kPeerFailureExitCode);
  [[maybe_unused]] auto n = ::write(STDERR_FILENO, line.data(), line.size());
}

// The message of the exception in flight when it is a PeerFailure; empty otherwise.
std::string uncaught_peer_failure() {
  const std::exception_ptr error = std::current_exception();
  if (!error) return "";
  try {
    std::rethrow_exception(error);
  } catch (const PeerFailure& e) {
    return e.what();
  } catch (...) {
    return "";
  }
}

[[noreturn]] void on_terminate() {
  if (g_armed.load()) {
    const std::string why = uncaught_peer_failure();
    if (!why.empty()) {
      // The io thread ends the process from here on in the usual case.
      const auto until = Clock::now() + kUncaughtWait;
      while (Clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(10));
      write_stop_line(g_self.load(), why);
      run_fast_exit_cleanups();
      std::_Exit(distributed::kPeerFailureExitCode);
    }
  }
  if (g_previous_terminate != nullptr) g_previous_terminate();
  std::abort();
}

}  // namespace

void arm_peer_failure_exit(int self) {
  static std::once_flag once;
  std::call_once(once, [] { g_previous_terminate = std::set_terminate(on_terminate); });
  g_self.store(self);
  g_armed.store(true);
}

void disarm_peer_failure_exit() { g_armed.store(false); }

void exit_on_peer_failure(int self, const CoordService* service, const FailureReport& info) {
  write_stop_line(self, info.to_string());
  // Others leave as they hear; only this process's own connection may stay.
  if (service != nullptr) service->wait_until_disconnected(kNoticeFlushTimeout, 1);
  run_fast_exit_cleanups();
  std::_Exit(distributed::kPeerFailureExitCode);
}

}  // namespace spmd
