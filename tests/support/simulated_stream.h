// A device's stream for tests without a device: work queued on it runs in order on a thread of
// its own, and a fence says when the work queued before it has run, as a CUDA event does. The
// simulated device backend hands one out per device (Backend::stream), so that a test device
// communicator's collectives are queued and finish later, as NCCL's are on a GPU.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

namespace spmd::testing {

class SimulatedStream {
 public:
  SimulatedStream() : thread_([this] { serve(); }) {}
  ~SimulatedStream() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }
  SimulatedStream(const SimulatedStream&) = delete;
  SimulatedStream& operator=(const SimulatedStream&) = delete;

  // Runs `work` after everything queued before it.
  void enqueue(std::function<void()> work) {
    {
      std::lock_guard lock(mutex_);
      queue_.push_back(std::move(work));
    }
    wake_.notify_all();
  }

  // A probe: true once everything queued before this call has run.
  std::function<bool()> fence() {
    auto passed = std::make_shared<std::atomic<bool>>(false);
    enqueue([passed] { passed->store(true); });
    return [passed] { return passed->load(); };
  }

 private:
  void serve() {
    std::unique_lock lock(mutex_);
    for (;;) {
      wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, with nothing left
      std::function<void()> work = std::move(queue_.front());
      queue_.pop_front();
      lock.unlock();
      work();
      lock.lock();
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> queue_;
  bool stopping_ = false;
  std::thread thread_;  // last: it starts once the rest is made
};

}  // namespace spmd::testing
