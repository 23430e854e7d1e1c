// A device's share of the process's cores. Each CPU device computes on a team of threads: the
// device's own thread plus size() - 1 helpers, started with the team and kept for its life.
// Kernels split their work with parallel_for below, which uses the calling thread's team (set
// by a TeamScope around each device's function, compute/device_run.cc) and runs inline on a
// thread without one (the user's host code, a helper itself).
//
// Splitting never changes a value: every part is a set of whole outputs (element ranges, rows,
// columns, blocks of a product) computed exactly as the single-threaded kernel computes them, so
// results do not depend on the team's size.
//
// Helpers run each part in the caller's floating-point environment (float_environment.h), so a
// part computed on a helper flushes subnormals exactly when the device's own thread would.
//
// The hand-off: a helper that has finished a part watches for the next one for kSpin (a spin on
// one atomic, the processor told it is waiting) before it sleeps on a condition variable, and
// run() watches its helpers finish the same way before it sleeps. A step's kernels follow one
// another within microseconds, and waking a sleeping thread costs tens of them on a virtual
// machine (sum(a, 1) over 32 MiB: 0.48 ms with a sleep per kernel, 0.36 with the spin); a team
// left idle sleeps after kSpin and costs nothing.
//
// Thread-safe for one caller at a time per team (a device's thread is its only caller); helpers
// never call back into their team.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

namespace spmd::kernels {

class ThreadTeam {
 public:
  // size ≥ 1 threads in all, the caller counted: size - 1 helpers start here.
  explicit ThreadTeam(int size);
  ~ThreadTeam();  // stops and joins the helpers
  ThreadTeam(const ThreadTeam&) = delete;
  ThreadTeam& operator=(const ThreadTeam&) = delete;

  int size() const { return static_cast<int>(helpers_.size()) + 1; }

  // How long a helper, or run(), watches before it sleeps.
  static constexpr std::chrono::microseconds kSpin{100};

  // part(context, i) for every i in [0, parts), parts ≤ size(): part 0 on the calling thread,
  // the others on helpers, concurrently; returns when all have returned. The first exception a
  // part throws is rethrown here after the others have finished. Inside a part no thread has a
  // team, so a kernel a part calls runs its own parallel_for inline.
  void run(int parts, void (*part)(void* context, int index), void* context);

 private:
  struct Job {
    void (*part)(void*, int) = nullptr;
    void* context = nullptr;
    uint64_t float_mode = 0;
    int parts = 0;
  };
  void loop(int helper);
  bool wait_for_job(uint64_t seen);  // false: the team stops
  void finish_part();
  void wait_for_helpers();
  void record(std::exception_ptr error);

  std::mutex mu_;
  std::condition_variable wake_;
  std::condition_variable done_;
  // Written by run() before generation_ is bumped, read by helpers after they see it bumped;
  // never rewritten while a helper may read it (run() returns only when pending_ is 0).
  Job job_;
  std::atomic<uint64_t> generation_ = 0;  // bumped per run(): a helper runs each generation once
  std::atomic<int> pending_ = 0;          // helpers still running this generation's parts
  std::atomic<bool> stopping_ = false;
  std::exception_ptr error_;
  std::vector<std::thread> helpers_;
};

// Sets the calling thread's team for its lifetime (nullptr: none) and restores the previous one.
class TeamScope {
 public:
  explicit TeamScope(ThreadTeam* team);
  ~TeamScope();
  TeamScope(const TeamScope&) = delete;
  TeamScope& operator=(const TeamScope&) = delete;

 private:
  ThreadTeam* previous_;
};

// The calling thread's team, or nullptr.
ThreadTeam* current_team();

// How many threads parallel_for may use on this thread: its team's size, else 1.
int team_size();

// fn(begin, end) over [0, n) split into contiguous ranges, one per thread of the calling
// thread's team, none shorter than `grain` (so that n < 2 × grain runs as one call, on the
// calling thread), each beginning at a multiple of `align` (but the first). Returns when every
// range is done; rethrows the first exception.
template <class Fn>
void parallel_for(int64_t n, int64_t grain, int64_t align, Fn&& fn);

// --- implementation ---

namespace detail {
struct Ranges {
  int64_t n, step;
  void* fn;
};
int parts_for(int64_t n, int64_t grain);
int64_t part_step(int64_t n, int parts, int64_t align);
}  // namespace detail

template <class Fn>
void parallel_for(int64_t n, int64_t grain, int64_t align, Fn&& fn) {
  const int parts = detail::parts_for(n, grain);
  if (parts <= 1) {
    if (n > 0) fn(int64_t{0}, n);
    return;
  }
  detail::Ranges ranges{n, detail::part_step(n, parts, align), &fn};
  const int used = static_cast<int>((n + ranges.step - 1) / ranges.step);
  current_team()->run(
      used,
      [](void* context, int i) {
        const auto& r = *static_cast<detail::Ranges*>(context);
        const int64_t begin = i * r.step;
        const int64_t end = begin + r.step < r.n ? begin + r.step : r.n;
        (*static_cast<std::remove_reference_t<Fn>*>(r.fn))(begin, end);
      },
      &ranges);
}

}  // namespace spmd::kernels
