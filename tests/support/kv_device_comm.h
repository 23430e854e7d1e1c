// Device communicators for tests without a device (comm/device_comm_factory.h), with NCCL's
// contract and none of spmd's host engine: a collective is queued on the device's simulated
// stream (simulated_stream.h) and exchanges its bytes through the job's key-value store,
// waiting for every rank for as long as it takes, as NCCL has no deadline of its own, until
// abort(). So a rank that stops taking part leaves the others' collectives unfinished, and only
// the runtime's watchdog can end them, as on GPUs. Every buffer must be the simulated device's
// memory, which the backend checks.
//
// Each rank of the same generation shares the id rank 0 made; ranks given different ids never
// meet (so a broken id exchange shows as a collective that never finishes).
#pragma once

#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "comm/device_comm_factory.h"
#include "comm/reduce_kernels.h"
#include "spmd/coordination_client.h"
#include "spmd/distributed.h"
#include "support/simulated_device_backend.h"

namespace spmd::testing {

// What every communicator of one factory reports, for the test's assertions.
struct KvCommLog {
  std::mutex mutex;
  std::set<std::string> ops;  // the collectives that completed ("all_reduce", …)
  int completed = 0;
  int made = 0;
  std::vector<std::string> ids;  // each communicator's id, in order made
};

class KvDeviceComm final : public DeviceCommunicator {
 public:
  KvDeviceComm(const SimulatedDeviceBackend& device, const std::string& id, int rank, int size,
               std::shared_ptr<KvCommLog> log)
      : device_(device),
        state_(std::make_shared<State>()),
        rank_(rank),
        size_(size),
        log_(std::move(log)) {
    state_->prefix = "spmd-test/kv-device-comm/" + id;
  }
  ~KvDeviceComm() override {
    abort();
    std::unique_lock lock(state_->mutex);
    state_->idle.wait(lock, [&] { return state_->running == 0; });
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }

  void all_reduce(const void* in, void* out, size_t count, DType dtype, ReduceOp op,
                  void* stream) override {
    const size_t bytes = count * dtype_size(dtype);
    queue("all_reduce", in, bytes, out, stream, [=](const std::vector<std::string>& all) {
      std::memcpy(out, all[0].data(), bytes);
      for (size_t r = 1; r < all.size(); ++r) reduce_into(dtype, op, out, all[r].data(), count);
    });
  }
  void all_gather(const void* in, void* out, size_t count, DType dtype, void* stream) override {
    const size_t bytes = count * dtype_size(dtype);
    queue("all_gather", in, bytes, out, stream, [=](const std::vector<std::string>& all) {
      for (size_t r = 0; r < all.size(); ++r) {
        std::memcpy(static_cast<std::byte*>(out) + r * bytes, all[r].data(), bytes);
      }
    });
  }
  void reduce_scatter(const void* in, void* out, size_t count, DType dtype, ReduceOp op,
                      void* stream) override {
    const size_t bytes = count * dtype_size(dtype);
    const int me = rank_;
    queue("reduce_scatter", in, bytes * static_cast<size_t>(size_), out, stream,
          [=](const std::vector<std::string>& all) {
            const size_t at = static_cast<size_t>(me) * bytes;
            std::memcpy(out, all[0].data() + at, bytes);
            for (size_t r = 1; r < all.size(); ++r) {
              reduce_into(dtype, op, out, all[r].data() + at, count);
            }
          });
  }
  void broadcast(const void* in, void* out, size_t count, DType dtype, int root,
                 void* stream) override {
    const size_t bytes = count * dtype_size(dtype);
    queue("broadcast", rank_ == root ? in : out, bytes, out, stream,
          [=](const std::vector<std::string>& all) {
            std::memcpy(out, all[static_cast<size_t>(root)].data(), bytes);
          });
  }

  DeviceCommStatus poll() override {
    std::lock_guard lock(state_->mutex);
    if (state_->aborted) return {DeviceCommState::kFailed, "aborted"};
    return state_->failure;
  }
  void abort() override {
    std::lock_guard lock(state_->mutex);
    state_->aborted = true;
  }

 private:
  struct State {
    std::mutex mutex;
    std::condition_variable idle;
    std::string prefix;
    bool aborted = false;
    DeviceCommStatus failure;
    int running = 0;
  };

  // Queues one collective: publish `bytes` of `in` as this rank's part of call number k, wait
  // for every rank's, and let `finish` write `out` from them (rank order).
  template <class Finish>
  void queue(const char* op, const void* in, size_t bytes, void* out, void* stream, Finish finish) {
    device_.check_on_device(in, op);
    device_.check_on_device(out, op);
    const std::string key = fmt::format("{}/{}", state_->prefix, calls_++);
    {
      std::lock_guard lock(state_->mutex);
      if (state_->aborted) throw FailedPrecondition("a collective on an aborted communicator");
      ++state_->running;
    }
    std::string mine(static_cast<const char*>(in), bytes);
    auto state = state_;
    auto log = log_;
    const int size = size_, rank = rank_;
    static_cast<SimulatedStream*>(stream)->enqueue([=, mine = std::move(mine)] {
      std::optional<std::vector<std::string>> all = exchange(*state, key, rank, size, mine);
      // Under the lock, so that once abort() has returned nothing writes `out` (whose owner
      // may let it go as soon as the watchdog has thrown).
      std::lock_guard lock(state->mutex);
      if (all && !state->aborted) {
        finish(*all);
        std::lock_guard logged(log->mutex);
        log->ops.insert(op);
        ++log->completed;
      }
      --state->running;
      state->idle.notify_all();
    });
  }

  // Every rank's part of the call `key`, or nullopt once aborted (or the store failed).
  static std::optional<std::vector<std::string>> exchange(State& state, const std::string& key,
                                                          int rank, int size,
                                                          const std::string& mine) {
    try {
      distributed::Client& kv = distributed::client();
      kv.key_value_set(fmt::format("{}/{}", key, rank), mine);
      std::vector<std::string> all(static_cast<size_t>(size));
      for (int r = 0; r < size; ++r) {
        for (;;) {
          if (auto v = kv.key_value_try_get(fmt::format("{}/{}", key, r))) {
            all[static_cast<size_t>(r)] = std::move(*v);
            break;
          }
          {
            std::lock_guard lock(state.mutex);
            if (state.aborted) return std::nullopt;
          }
          std::this_thread::sleep_for(std::chrono::microseconds(500));
        }
      }
      return all;
    } catch (const std::exception& e) {
      std::lock_guard lock(state.mutex);
      state.failure = {DeviceCommState::kFailed, e.what(), true};
      return std::nullopt;
    }
  }

  const SimulatedDeviceBackend& device_;
  std::shared_ptr<State> state_;
  int rank_, size_;
  std::shared_ptr<KvCommLog> log_;
  uint64_t calls_ = 0;
};

class KvDeviceCommFactory final : public DeviceCommFactory {
 public:
  explicit KvDeviceCommFactory(const SimulatedDeviceBackend& device) : device_(device) {}

  std::string name() const override { return "key-value test"; }
  std::string make_id() const override {
    return fmt::format("{}-{}", getpid(), next_id_.fetch_add(1));
  }
  std::unique_ptr<DeviceCommunicator> make(const DeviceCommSpec& spec) const override {
    {
      std::lock_guard lock(log_->mutex);
      ++log_->made;
      log_->ids.push_back(spec.id);
    }
    return std::make_unique<KvDeviceComm>(device_, spec.id, spec.rank, spec.size, log_);
  }

  std::shared_ptr<KvCommLog> log() const { return log_; }

 private:
  const SimulatedDeviceBackend& device_;
  mutable std::atomic<int> next_id_{0};
  std::shared_ptr<KvCommLog> log_ = std::make_shared<KvCommLog>();
};

}  // namespace spmd::testing
