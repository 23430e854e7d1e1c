// The runner's parts, shared with the waiting local participants.
#include "comm/local_assist.h"

namespace spmd {

void LocalAssist::work(Job& job, std::unique_lock<std::mutex>& lock) {
  while (job.next < job.parts) {
    const int i = job.next++;
    lock.unlock();
    std::exception_ptr error;
    try {
      job.part(i);
    } catch (...) {
      error = std::current_exception();
    }
    lock.lock();
    if (error && !job.error) job.error = error;
    if (++job.done == job.parts) finished_.notify_all();
  }
}

void LocalAssist::run(int parts, FunctionRef<void(int)> part) {
  if (parts <= 0) return;
  Job job{.part = part, .parts = parts};
  std::unique_lock lock(mu_);
  job_ = &job;
  posted_.store(true, std::memory_order_release);
  lock.unlock();
  if (parts > 1) wake_();
  lock.lock();
  work(job, lock);
  posted_.store(false, std::memory_order_release);
  job_ = nullptr;  // no helper takes a part now; those taken finish below
  finished_.wait(lock, [&] { return job.done == job.parts; });  // bounded: parts compute
  if (job.error) std::rethrow_exception(job.error);
}

void LocalAssist::help() {
  std::unique_lock lock(mu_);
  if (job_ != nullptr) work(*job_, lock);
}

}  // namespace spmd
