// Pinned host buffers that stage copies between pageable host memory and a GPU, each reused once
// the copy that last used it is done: the bookkeeping of device_memory.h's staged copies, apart
// from CUDA so that it is tested on the CPU (tests/kernels/cuda_staging_ring_test.cc).
//
// A copy larger than one buffer goes in chunks (chunks()), taking buffers in turn: while the GPU
// moves one chunk, the host fills or drains the next, so the two overlap. A buffer is held by one
// caller between acquire() and release(); release() marks it with a fence after the copy queued
// from or into it, and acquire() hands it out again only once that fence has passed, waiting for
// the oldest when every buffer is in flight. Buffers are made on first use and freed with the
// ring. Thread-safe; acquire() never waits for a buffer another thread holds: with every buffer
// held it answers none, and the caller copies without staging.
#pragma once

#include <cstddef>
#include <mutex>
#include <utility>
#include <vector>

namespace spmd::kernels::cuda {

// What the ring needs of the GPU, one fence per buffer (a CUDA event in device_memory.cc).
class StagingDevice {
 public:
  virtual ~StagingDevice() = default;
  virtual void* allocate_pinned(size_t bytes) = 0;
  virtual void free_pinned(void* buffer) noexcept = 0;
  // A fence for buffer `slot` after the work queued so far on the stream.
  virtual void mark(int slot) = 0;
  // Whether buffer `slot`'s fence has passed.
  virtual bool passed(int slot) = 0;
  // Waits until it has (bounded by the copy it follows).
  virtual void wait(int slot) = 0;
};

class StagingRing {
 public:
  struct Slot {
    std::byte* data = nullptr;  // null: no buffer free, copy without staging
    int index = -1;
  };

  // `buffers` buffers of `buffer_bytes` each, over `device`, which must outlive the ring.
  StagingRing(StagingDevice& device, size_t buffer_bytes, int buffers);
  ~StagingRing();
  StagingRing(const StagingRing&) = delete;
  StagingRing& operator=(const StagingRing&) = delete;

  size_t buffer_bytes() const { return buffer_bytes_; }

  // A buffer whose last copy is done, held by the caller until release().
  Slot acquire();
  // The copy from `slot` has been queued (host to device): its buffer is free once the fence
  // passes.
  void release(const Slot& slot);
  // For a copy into `slot` that the holder reads back (device to host), the slot staying held:
  // fence() after the copy is queued, wait_held() before reading, give_back() after.
  void fence(const Slot& slot);
  void wait_held(const Slot& slot);
  void give_back(const Slot& slot);

  // [offset, length) pieces of `bytes`, in order, each at most `chunk` long.
  static std::vector<std::pair<size_t, size_t>> chunks(size_t bytes, size_t chunk);

 private:
  enum class State { kFree, kHeld, kInFlight };
  struct Buffer {
    std::byte* data = nullptr;
    State state = State::kFree;
    unsigned long long order = 0;  // when it was last released, to find the oldest in flight
  };

  StagingDevice& device_;
  const size_t buffer_bytes_;
  std::mutex mutex_;
  std::vector<Buffer> buffers_;
  unsigned long long releases_ = 0;
};

}  // namespace spmd::kernels::cuda
