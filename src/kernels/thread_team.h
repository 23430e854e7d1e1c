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
// The hand-off: run() publishes a job of numbered parts, runs part 0 itself and then takes the
// parts no helper has taken, one at a time, so a run never waits for a helper to wake: only for
// the parts helpers have already taken to finish. A helper that wakes late finds nothing left and
// waits again. This matters where a helper sleeps: on a virtual machine the scheduler may wake it
// on the caller's own core, behind the caller (4 MiB exp: 0.10 ms with both cores at work, 0.39
// when a run waited for such a helper, 0.19 on one core alone).
//
// A helper that has finished watches for the next job for kSpin (a spin on one atomic, the
// processor told it is waiting, yielding its core to any other thread ready to run on it) before
// it sleeps on a condition variable, and run() watches the helpers' parts finish the same way. A
// step's kernels follow one another within microseconds, and waking a sleeping thread costs tens
// of them on a virtual machine (sum(a, 1) over 32 MiB: 0.48 ms with a sleep per kernel, 0.36 with
// the spin); a team left idle sleeps after kSpin and costs nothing.
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

  // The most parts one run() takes.
  static constexpr int kMaxParts = 0xFFFF;

  // part(context, i) for every i in [0, parts), each exactly once: part 0 on the calling thread,
  // the others on whichever thread takes them first, a helper or the caller once its part is
  // done, so parts may outnumber the threads; returns when all have returned. Parts must not
  // wait for one another (two of them may run one after the other on one thread). The first
  // exception a part throws is rethrown here after the others have finished. Where parts > 1,
  // no thread has a team inside a part, so a kernel a part calls runs its own parallel_for
  // inline. Throws InvalidArgument for parts outside [0, kMaxParts].
  void run(int parts, void (*part)(void* context, int index), void* context);

 private:
  struct Job {
    void (*part)(void*, int) = nullptr;
    void* context = nullptr;
    uint64_t float_mode = 0;
  };
  void run_alone(int parts, void (*part)(void*, int), void* context);  // no helpers
  void loop();
  bool wait_for_job(uint32_t& seen);  // false: the team stops; else `seen` is the newest run
  int claim();                        // the next part of the current run, or -1: none is left
  void run_part(const Job& job, int index);
  void wait_for_parts();
  void record(std::exception_ptr error);

  std::mutex mu_;
  std::condition_variable wake_;
  std::condition_variable done_;
  // Written by run() before it publishes the run in state_, read by a helper once it has taken
  // a part of that run; never rewritten while a helper may read it (run() returns only when
  // every part is done, and a part can be taken only from the run in state_).
  Job job_;
  // The current run: its number (bits 32-63, one more per run()), its parts (bits 16-31) and
  // the next part to take (bits 0-15). A part is taken by raising the last from below the parts.
  std::atomic<uint64_t> state_ = 0;
  uint32_t runs_ = 0;                // the caller's count of runs, the number in state_
  std::atomic<int> unfinished_ = 0;  // parts of the current run not yet returned
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
