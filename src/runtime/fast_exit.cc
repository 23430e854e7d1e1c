#include "runtime/fast_exit.h"

#include <array>
#include <atomic>
#include <mutex>

#include "spmd/error.h"

namespace spmd {
namespace {

using Cleanup = void (*)() noexcept;

constexpr size_t kMaxCleanups = 8;

// Filled under g_mu, read without it by run_fast_exit_cleanups(), which may interrupt anything.
std::array<std::atomic<Cleanup>, kMaxCleanups> g_cleanups{};
std::mutex g_mu;

}  // namespace

void add_fast_exit_cleanup(Cleanup cleanup) {
  std::lock_guard<std::mutex> lock(g_mu);
  for (std::atomic<Cleanup>& slot : g_cleanups) {
    const Cleanup there = slot.load();
    if (there == cleanup) return;
    if (there == nullptr) {
      slot.store(cleanup);
      return;
    }
  }
  throw InvalidArgument("more than 8 fast-exit cleanups registered");
}

void run_fast_exit_cleanups() noexcept {
  for (std::atomic<Cleanup>& slot : g_cleanups) {
    if (const Cleanup cleanup = slot.exchange(nullptr)) cleanup();
  }
}

}  // namespace spmd
