// A device's team of threads and the split of a kernel's work over it.
#include "kernels/thread_team.h"

#include <algorithm>
#include <utility>

#include "kernels/float_environment.h"
#include "spmd/error.h"

namespace spmd::kernels {
namespace {

thread_local ThreadTeam* this_thread_team = nullptr;

}  // namespace

ThreadTeam::ThreadTeam(int size) {
  if (size < 1) throw InvalidArgument("a thread team needs at least one thread");
  helpers_.reserve(static_cast<size_t>(size - 1));
  for (int h = 0; h + 1 < size; ++h) helpers_.emplace_back([this, h] { loop(h); });
}

ThreadTeam::~ThreadTeam() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
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
  {
    std::lock_guard lock(mu_);
    job_ = Job{part, context, float_mode(), parts};
    pending_ = static_cast<int>(helpers_.size());
    error_ = nullptr;
    ++generation_;
  }
  wake_.notify_all();
  try {
    const TeamScope inline_only(nullptr);  // a parallel_for inside a part runs inline
    part(context, 0);
  } catch (...) {
    record(std::current_exception());
  }
  std::unique_lock lock(mu_);
  done_.wait(lock, [&] { return pending_ == 0; });  // bounded: the parts compute, never wait
  if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
}

void ThreadTeam::loop(int helper) {
  uint64_t seen = 0;
  std::unique_lock lock(mu_);
  while (true) {
    wake_.wait(lock, [&] { return stopping_ || generation_ != seen; });
    if (stopping_) return;
    seen = generation_;
    const Job job = job_;
    lock.unlock();
    if (helper + 1 < job.parts) {  // helper h runs part h + 1
      const FloatModeScope mode(job.float_mode);
      try {
        job.part(job.context, helper + 1);
      } catch (...) {
        record(std::current_exception());
      }
    }
    lock.lock();
    if (--pending_ == 0) done_.notify_one();
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
