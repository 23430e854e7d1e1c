// A device's team of threads and the split of a kernel's work over it.
#include "kernels/thread_team.h"

#include <fmt/format.h>
#include <sched.h>

#include <algorithm>
#include <utility>

#include "kernels/float_environment.h"
#include "spmd/error.h"

namespace spmd::kernels {
namespace {

thread_local ThreadTeam* this_thread_team = nullptr;

// Tells the processor this thread is waiting on memory (a spin's body).
inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Spins on `done` for kSpin, yielding the core now and then to any thread ready to run on it;
// true if `done` held within that time.
template <class Done>
bool spin_until(Done done) {
  const auto until = std::chrono::steady_clock::now() + ThreadTeam::kSpin;
  while (!done()) {
    for (int i = 0; i < 64; ++i) cpu_relax();
    if (done()) return true;
    if (std::chrono::steady_clock::now() > until) return false;
    sched_yield();
  }
  return true;
}

constexpr int kPartBits = 16;
constexpr uint64_t kPartMask = (uint64_t{1} << kPartBits) - 1;
static_assert(ThreadTeam::kMaxParts <= static_cast<int>(kPartMask));

uint64_t run_state(uint32_t run, int parts, int next) {
  return uint64_t{run} << (2 * kPartBits) | uint64_t(parts) << kPartBits | uint64_t(next);
}
uint32_t run_of(uint64_t state) { return static_cast<uint32_t>(state >> (2 * kPartBits)); }
int parts_of(uint64_t state) { return static_cast<int>(state >> kPartBits & kPartMask); }
int next_of(uint64_t state) { return static_cast<int>(state & kPartMask); }

}  // namespace

ThreadTeam::ThreadTeam(int size) {
  if (size < 1) throw InvalidArgument("a thread team needs at least one thread");
  helpers_.reserve(static_cast<size_t>(size - 1));
  for (int h = 0; h + 1 < size; ++h) helpers_.emplace_back([this] { loop(); });
}

ThreadTeam::~ThreadTeam() {
  {
    std::lock_guard lock(mu_);
    stopping_.store(true);
  }
  wake_.notify_all();
  for (std::thread& t : helpers_) t.join();
}

void ThreadTeam::record(std::exception_ptr error) {
  std::lock_guard lock(mu_);
  if (!error_) error_ = std::move(error);
}

void ThreadTeam::run(int parts, void (*part)(void*, int), void* context) {
  if (parts < 0 || parts > kMaxParts) {
    throw InvalidArgument(
        fmt::format("a team runs 0 to {} parts at once, not {}", kMaxParts, parts));
  }
  if (parts <= 1) {
    if (parts == 1) part(context, 0);
    return;
  }
  if (helpers_.empty()) return run_alone(parts, part, context);
  job_ = Job{part, context, float_mode()};
  error_ = nullptr;  // no helper runs a part now, so none records
  unfinished_.store(parts, std::memory_order_relaxed);
  {
    // Under the lock, so that a helper about to sleep either sees the new run or is already
    // waiting when notified.
    std::lock_guard lock(mu_);
    state_.store(run_state(++runs_, parts, 1), std::memory_order_release);
  }
  wake_.notify_all();  // no system call where every helper is still spinning
  {
    const TeamScope inline_only(nullptr);  // a parallel_for inside a part runs inline
    run_part(job_, 0);
    for (int i = claim(); i >= 0; i = claim()) run_part(job_, i);
  }
  wait_for_parts();
  std::lock_guard lock(mu_);
  if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
}

void ThreadTeam::run_alone(int parts, void (*part)(void*, int), void* context) {
  const TeamScope inline_only(nullptr);
  std::exception_ptr first;
  for (int i = 0; i < parts; ++i) {
    try {
      part(context, i);
    } catch (...) {
      if (!first) first = std::current_exception();
    }
  }
  if (first) std::rethrow_exception(first);
}

int ThreadTeam::claim() {
  uint64_t s = state_.load(std::memory_order_acquire);
  while (next_of(s) < parts_of(s)) {
    if (state_.compare_exchange_weak(s, s + 1, std::memory_order_acq_rel,
                                     std::memory_order_acquire)) {
      return next_of(s);
    }
  }
  return -1;
}

void ThreadTeam::run_part(const Job& job, int index) {
  try {
    job.part(job.context, index);
  } catch (...) {
    record(std::current_exception());
  }
  if (unfinished_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    // Under the lock, so that run() either sees unfinished_ at 0 or is already waiting.
    std::lock_guard lock(mu_);
    done_.notify_one();
  }
}

void ThreadTeam::wait_for_parts() {
  const auto finished = [&] { return unfinished_.load(std::memory_order_acquire) == 0; };
  if (spin_until(finished)) return;
  std::unique_lock lock(mu_);
  done_.wait(lock, finished);  // bounded: the parts compute, never wait
}

bool ThreadTeam::wait_for_job(uint32_t& seen) {
  const auto ready = [&] {
    return stopping_.load(std::memory_order_relaxed) ||
           run_of(state_.load(std::memory_order_acquire)) != seen;
  };
  if (!spin_until(ready)) {
    std::unique_lock lock(mu_);
    wake_.wait(lock, ready);
  }
  seen = run_of(state_.load(std::memory_order_acquire));
  return !stopping_.load();
}

void ThreadTeam::loop() {
  uint32_t seen = 0;
  while (wait_for_job(seen)) {
    for (int i = claim(); i >= 0; i = claim()) {
      // Taking part i holds the run open until it returns, so job_ is that run's.
      const Job job = job_;
      const FloatModeScope mode(job.float_mode);
      run_part(job, i);
    }
  }
}

TeamScope::TeamScope(ThreadTeam* team) : previous_(this_thread_team) { this_thread_team = team; }

TeamScope::~TeamScope() { this_thread_team = previous_; }

ThreadTeam* current_team() { return this_thread_team; }

int team_size() { return this_thread_team == nullptr ? 1 : this_thread_team->size(); }

namespace detail {

int parts_for(int64_t n, int64_t grain) {
  const int threads = team_size();
  if (threads <= 1 || n < 2 * std::max<int64_t>(grain, 1)) return 1;
  return static_cast<int>(std::min<int64_t>(threads, n / std::max<int64_t>(grain, 1)));
}

int64_t part_step(int64_t n, int parts, int64_t align) {
  align = std::max<int64_t>(align, 1);
  const int64_t step = (n + parts - 1) / parts;
  return (step + align - 1) / align * align;
}

}  // namespace detail
}  // namespace spmd::kernels
