// Ctrl-C in blocking calls. Python's own SIGINT handler writes the signal's number into its
// wakeup fd (signal.set_wakeup_fd, set by python/spmd/_interrupt.py); a watcher thread reads that
// pipe and calls distributed::interrupt, so that a call waiting for other processes with the GIL
// released ends within a wait slice. The call's error then gives way to the KeyboardInterrupt
// Python's handler raises (the translator below). Bytes of other signals, and all bytes when an
// earlier wakeup fd was set (asyncio's), are passed on to that fd.
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <memory>
#include <thread>

#include "bindings.h"
#include "spmd/distributed.h"
#include "spmd/error.h"

namespace spmd::python {
namespace {

class InterruptWatcher {
 public:
  InterruptWatcher(int read_fd, int forward_fd)
      : read_fd_(read_fd), forward_fd_(forward_fd), thread_([this] { run(); }) {}
  ~InterruptWatcher() {
    stop_.store(true);
    thread_.join();  // within one poll slice
  }
  InterruptWatcher(const InterruptWatcher&) = delete;
  InterruptWatcher& operator=(const InterruptWatcher&) = delete;

 private:
  static constexpr int kPollSliceMs = 100;

  void run() {
    while (!stop_.load()) {
      pollfd p{read_fd_, POLLIN, 0};
      if (::poll(&p, 1, kPollSliceMs) <= 0) continue;
      unsigned char bytes[64];
      const ssize_t n = ::read(read_fd_, bytes, sizeof bytes);
      for (ssize_t i = 0; i < n; ++i) handle(bytes[i]);
    }
  }

  void handle(unsigned char signal) {
    if (forward_fd_ >= 0) [[maybe_unused]]
      auto w = ::write(forward_fd_, &signal, 1);
    if (signal == SIGINT) distributed::interrupt("SIGINT (Ctrl-C)");
  }

  int read_fd_;
  int forward_fd_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

std::unique_ptr<InterruptWatcher>& watcher() {
  static std::unique_ptr<InterruptWatcher> w;
  return w;
}

}  // namespace

void bind_interrupt(nb::module_& m) {
  // read_fd: the pipe Python's wakeup fd writes into; forward_fd: the previous wakeup fd, or -1.
  m.def("_watch_interrupts", [](int read_fd, int forward_fd) {
    watcher() = std::make_unique<InterruptWatcher>(read_fd, forward_fd);
  });
  m.def("_stop_watching_interrupts", [] {
    nb::gil_scoped_release release;
    watcher().reset();
  });
  // Tried before spmd's own translators: an error that ends a call Ctrl-C interrupted becomes
  // the KeyboardInterrupt (or whatever the user's SIGINT handler raises) that explains it.
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const Error&) {
      if (PyErr_CheckSignals() != 0) return;
      throw;
    }
  });
}

}  // namespace spmd::python
