// Persistent per-device threads and the hand-off of one job to each.
#include "compute/device_workers.h"

#include "runtime/runtime_state.h"

namespace spmd {

DeviceWorkers::~DeviceWorkers() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (auto& w : workers_) w->thread.join();
}

void DeviceWorkers::run(std::span<const std::function<void()>> jobs) {
  if (jobs.empty()) return;
  std::lock_guard turn(run_mu_);
  if (jobs.size() == 1) {  // one device: no worker to wake
    jobs[0]();
    return;
  }
  {
    std::lock_guard lock(mu_);
    while (workers_.size() + 1 < jobs.size()) {
      workers_.push_back(std::make_unique<Worker>());
      const size_t index = workers_.size() - 1;
      workers_.back()->thread = std::thread([this, index] { loop(index); });
    }
    for (size_t i = 1; i < jobs.size(); ++i) workers_[i - 1]->job = &jobs[i];
    pending_ = jobs.size() - 1;
  }
  wake_.notify_all();
  jobs[0]();
  std::unique_lock lock(mu_);
  done_.wait(lock, [&] { return pending_ == 0; });
}

void DeviceWorkers::loop(size_t index) {
  std::unique_lock lock(mu_);
  while (true) {
    wake_.wait(lock, [&] { return stopping_ || workers_[index]->job != nullptr; });
    if (workers_[index]->job == nullptr) return;  // stopping, nothing left to run
    const std::function<void()>* job = workers_[index]->job;
    lock.unlock();
    (*job)();
    lock.lock();
    workers_[index]->job = nullptr;
    if (--pending_ == 0) done_.notify_all();
  }
}

std::shared_ptr<DeviceWorkers> device_workers() { return session_object<DeviceWorkers>(); }

}  // namespace spmd
