// The threads that run shard_map's per-device functions: one per local device, started once
// per runtime session and reused, so a call costs a hand-off rather than a thread start.
//
// Thread-safe: concurrent run() calls take turns.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <thread>
#include <vector>

namespace spmd {

class DeviceWorkers {
 public:
  DeviceWorkers() = default;
  ~DeviceWorkers();  // joins the threads
  DeviceWorkers(const DeviceWorkers&) = delete;
  DeviceWorkers& operator=(const DeviceWorkers&) = delete;

  // Runs every job concurrently — the first on the calling thread, the others on worker
  // threads — and returns when all have returned. Jobs must not throw. The wait has no deadline
  // of its own: the jobs bound it (every collective in them checks the abort flag and its
  // timeout).
  void run(std::span<const std::function<void()>> jobs);

 private:
  struct Worker {
    std::thread thread;
    const std::function<void()>* job = nullptr;  // set while it has one
  };
  void loop(size_t index);

  std::mutex run_mu_;  // one run() at a time
  std::mutex mu_;
  std::condition_variable wake_;
  std::condition_variable done_;
  std::vector<std::unique_ptr<Worker>> workers_;
  size_t pending_ = 0;
  bool stopping_ = false;
};

// This session's workers.
std::shared_ptr<DeviceWorkers> device_workers();

}  // namespace spmd
