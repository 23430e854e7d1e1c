// A device communicator on the CPU that keeps NCCL's contract (comm/device_collectives.h) with
// every outcome in the test's hands: creation stays kInProgress until join(); each queued
// collective stays unfinished until finish(), as one whose peer never arrives would; fail() is an
// asynchronous error (a peer's or the library's); abort() ends the communicator at once and
// every queued collective with it, as ncclCommAbort does. Collectives compute nothing: the
// watchdog looks only at state.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "comm/device_collectives.h"
#include "spmd/error.h"

namespace spmd::test {

class FakeDeviceCommunicator final : public DeviceCommunicator {
 public:
  // What the test controls, shared with the communicator (which the watchdog owns).
  struct Control {
    std::mutex mutex;
    bool joined = false;
    bool finish_at_once = false;  // each collective is finished as soon as it is queued
    bool aborted = false;
    int aborts = 0;
    DeviceCommStatus failure;                                // kReady while there is none
    std::vector<std::shared_ptr<std::atomic<bool>>> queued;  // each collective's "finished"

    void join() {
      std::lock_guard lock(mutex);
      joined = true;
    }
    void fail(std::string error, bool peer_lost) {
      std::lock_guard lock(mutex);
      failure = {DeviceCommState::kFailed, std::move(error), peer_lost};
    }
    // Marks collective `k` (in queued order) finished.
    void finish(size_t k) { queued.at(k)->store(true); }
  };

  FakeDeviceCommunicator(std::shared_ptr<Control> control, int rank, int size)
      : control_(std::move(control)), rank_(rank), size_(size) {}

  int rank() const override { return rank_; }
  int size() const override { return size_; }

  void all_reduce(const void*, void*, size_t, DType, ReduceOp, void*) override { queue(); }
  void all_gather(const void*, void*, size_t, DType, void*) override { queue(); }
  void reduce_scatter(const void*, void*, size_t, DType, ReduceOp, void*) override { queue(); }
  void broadcast(const void*, void*, size_t, DType, int, void*) override { queue(); }

  // The probe of the last collective queued: finished, or ended by abort.
  std::function<bool()> last_done() {
    std::lock_guard lock(control_->mutex);
    auto finished = control_->queued.back();
    auto control = control_;
    return [finished, control] {
      std::lock_guard lock(control->mutex);
      return finished->load() || control->aborted;
    };
  }

  DeviceCommStatus poll() override {
    std::lock_guard lock(control_->mutex);
    if (control_->aborted) return {DeviceCommState::kFailed, "aborted"};
    if (control_->failure.state == DeviceCommState::kFailed) return control_->failure;
    if (!control_->joined) return {DeviceCommState::kInProgress, {}};
    return {DeviceCommState::kReady, {}};
  }

  void abort() override {
    std::lock_guard lock(control_->mutex);
    control_->aborted = true;
    ++control_->aborts;
  }

 private:
  void queue() {
    std::lock_guard lock(control_->mutex);
    if (control_->aborted) throw FailedPrecondition("a collective after abort");
    control_->queued.push_back(std::make_shared<std::atomic<bool>>(control_->finish_at_once));
  }

  std::shared_ptr<Control> control_;
  int rank_, size_;
};

}  // namespace spmd::test
