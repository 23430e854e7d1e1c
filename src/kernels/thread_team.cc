// A device's team of threads and the split of a kernel's work over it.
#include "kernels/thread_team.h"

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

// Spins on `done` for kSpin; true if it held within that time.
template <class Done>
bool spin_until(Done done) {
  const auto until = std::chrono::steady_clock::now() + ThreadTeam::kSpin;
  while (!done()) {
    for (int i = 0; i < 64; ++i) cpu_relax();
    if (done()) return true;
    if (std::chrono::steady_clock::now() > until) return false;
  }
  return true;
}

}  // namespace

ThreadTeam::ThreadTeam(int size) {
  if (size < 1) throw InvalidArgument("a thread team needs at least one thread");
  helpers_.reserve(static_cast<size_t>(size - 1));
  for (int h = 0; h + 1 < size; ++h) helpers_.emplace_back([this, h] { loop(h); });
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
  parts = std::clamp(parts, 0, size());
  if (parts <= 1) {
    if (parts == 1) part(context, 0);
    return;
  }
  job_ = Job{part, context, float_mode(), parts};
  error_ = nullptr;  // no helper runs a part now, so none records
  pending_.store(static_cast<int>(helpers_.size()), std::memory_order_relaxed);
  {
    // Under the lock, so that a helper about to sleep either sees the new generation or is
    // already waiting when notified.
    std::lock_guard lock(mu_);
    generation_.fetch_add(1, std::memory_order_release);
  }
  wake_.notify_all();  // no system call where every helper is still spinning
  try {
    const TeamScope inline_only(nullptr);  // a parallel_for inside a part runs inline
    part(context, 0);
  } catch (...) {
    record(std::current_exception());
  }
  wait_for_helpers();
  std::lock_guard lock(mu_);
  if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
}

void ThreadTeam::wait_for_helpers() {
  const auto finished = [&] { return pending_.load(std::memory_order_acquire) == 0; };
  if (spin_until(finished)) return;
  std::unique_lock lock(mu_);
  done_.wait(lock, finished);  // bounded: the parts compute, never wait
}

bool ThreadTeam::wait_for_job(uint64_t seen) {
  const auto ready = [&] {
    return stopping_.load(std::memory_order_relaxed) ||
           generation_.load(std::memory_order_acquire) != seen;
  };
  if (!spin_until(ready)) {
    std::unique_lock lock(mu_);
    wake_.wait(lock, ready);
  }
  return !stopping_.load();
}

void ThreadTeam::finish_part() {
  if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    // Under the lock, so that run() either sees pending_ at 0 or is already waiting.
    std::lock_guard lock(mu_);
    done_.notify_one();
  }
}

void ThreadTeam::loop(int helper) {
  uint64_t seen = 0;
  while (wait_for_job(seen)) {
    seen = generation_.load(std::memory_order_acquire);
    const Job job = job_;
    if (helper + 1 < job.parts) {  // helper h runs part h + 1
      const FloatModeScope mode(job.float_mode);
      try {
        job.part(job.context, helper + 1);
      } catch (...) {
        record(std::current_exception());
      }
    }
    finish_part();
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
