// reached_preemption_sync_point: the processes agree, through the coordination service's
// key-value store, on the first step every one of them can still reach after a preemption
// signal, without blocking any of them.
//
// Keys: spmd/preemption/notice (the first process to be signalled: "<process> <signal>"), and
// spmd/preemption/step/<process> (the step at which that process first saw the notice). Each
// process, at each call, reads the notice (one read) until it is there; then publishes the step
// it saw it at, and from then on reads the published steps until every process's is there. The
// sync step is their maximum plus one. Why nobody can pass it unknowing: the steps are in
// lockstep (each step communicates across every process), so when a process calls at step t,
// every process has made its call of step t - 1; at step max + 1 every process has therefore
// made its call of step max, the last first-seen step, and published it.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstring>
#include <mutex>
#include <optional>
#include <string>

#include "runtime/runtime_state.h"
#include "spmd/coordination_client.h"
#include "spmd/distributed.h"
#include "spmd/error.h"
#include "spmd/multihost.h"
#include "spmd/runtime.h"

namespace spmd::multihost {
namespace {

constexpr const char* kNotice = "spmd/preemption/notice";
constexpr const char* kSteps = "spmd/preemption/step";

// Signals received since the handler was installed. The first is the notice; a second one
// means "stop now": the handler restores the default action and re-raises it.
std::atomic<int> g_received{0};
std::atomic<int> g_handled_signal{0};

extern "C" void on_preemption_signal(int sig) {
  if (g_received.fetch_add(1) > 0) {
    std::signal(sig, SIG_DFL);
    std::raise(sig);
  }
}

// Installs the handler for `sig` (once per signal; a program that never asks about preemption
// keeps the signal's default action, so SIGTERM still ends it).
void install(int sig) {
  if (g_handled_signal.exchange(sig) == sig) return;
  struct sigaction sa {};
  sa.sa_handler = on_preemption_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  if (sigaction(sig, &sa, nullptr) != 0) {
    throw InvalidArgument(fmt::format("reached_preemption_sync_point: cannot handle signal {}: {}",
                                      sig, std::strerror(errno)));
  }
}

struct Preemption {
  std::mutex mu;
  bool published_notice = false;
  std::optional<int64_t> first_seen;  // the step this process first saw the notice at
  std::optional<int64_t> sync_step;
  std::optional<std::pair<int64_t, bool>> last;  // the last call's step and answer
};

// Once every process has published its first-seen step: their maximum plus one.
std::optional<int64_t> agreed_step(distributed::Client& kv) {
  const auto steps = kv.key_value_dir_get(kSteps);
  if (static_cast<int>(steps.size()) < process_count()) return std::nullopt;
  int64_t max = 0;
  for (const auto& [key, value] : steps) max = std::max<int64_t>(max, std::stoll(value));
  return max + 1;
}

void announce(distributed::Client& kv, int64_t sync) {
  if (process_index() != 0) return;
  const auto notice = kv.key_value_try_get(kNotice);
  spdlog::warn("preemption notice ({}): every process reaches its sync point at step {}",
               notice ? "process " + *notice : "?", sync);
}

// The sync step, once every process has published the step it first saw the notice at.
std::optional<int64_t> sync_step_of_cluster(Preemption& st, int64_t step) {
  distributed::Client& kv = distributed::client();
  if (!st.first_seen) {
    if (g_received.load() > 0 && !st.published_notice) {
      kv.key_value_set(kNotice,
                       fmt::format("{} signal {}", process_index(), g_handled_signal.load()), true);
      st.published_notice = true;
    }
    if (!st.published_notice && !kv.key_value_try_get(kNotice)) return std::nullopt;
    st.first_seen = step;
    kv.key_value_set(fmt::format("{}/{}", kSteps, process_index()), std::to_string(step), true);
  }
  const auto sync = agreed_step(kv);
  if (sync) announce(kv, *sync);
  return sync;
}

bool decide(Preemption& st, int64_t step) {
  if (!st.sync_step) {
    if (process_count() > 1 && distributed::is_initialized()) {
      st.sync_step = sync_step_of_cluster(st, step);
    } else if (g_received.load() > 0) {
      st.sync_step = step + 1;  // alone: the next step, as a cluster of one would agree
    }
    if (!st.sync_step) return false;
  }
  if (step > *st.sync_step) {
    throw FailedPrecondition(fmt::format(
        "reached_preemption_sync_point: process {} is at step {}, past the agreed preemption "
        "step {}; every process must call it at every step, with the steps in lockstep",
        process_index(), step, *st.sync_step));
  }
  return step == *st.sync_step;
}

}  // namespace

bool reached_preemption_sync_point(int64_t step) {
  install(preemption_signal());
  const auto st = session_object<Preemption>();
  std::lock_guard lock(st->mu);
  if (st->last && st->last->first == step) return st->last->second;
  const bool answer = decide(*st, step);
  st->last = {step, answer};
  return answer;
}

}  // namespace spmd::multihost
