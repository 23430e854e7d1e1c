#include "kernels/cuda/staging_ring.h"

#include <algorithm>

#include "spmd/error.h"

namespace spmd::kernels::cuda {

StagingRing::StagingRing(StagingDevice& device, size_t buffer_bytes, int buffers)
    : device_(device), buffer_bytes_(buffer_bytes), buffers_(static_cast<size_t>(buffers)) {
  if (buffer_bytes == 0 || buffers < 1) {
    throw InvalidArgument("StagingRing: needs at least one buffer of at least one byte");
  }
}

StagingRing::~StagingRing() {
  for (Buffer& b : buffers_) {
    if (b.data == nullptr) continue;
    if (b.state == State::kInFlight) device_.wait(static_cast<int>(&b - buffers_.data()));
    device_.free_pinned(b.data);
  }
}

StagingRing::Slot StagingRing::acquire() {
  std::unique_lock lock(mutex_);
  Buffer* oldest = nullptr;
  for (Buffer& b : buffers_) {
    const int index = static_cast<int>(&b - buffers_.data());
    if (b.state == State::kInFlight && device_.passed(index)) b.state = State::kFree;
    if (b.state == State::kFree) {
      if (b.data == nullptr)
        b.data = static_cast<std::byte*>(device_.allocate_pinned(buffer_bytes_));
      b.state = State::kHeld;
      return {b.data, index};
    }
    if (b.state == State::kInFlight && (oldest == nullptr || b.order < oldest->order)) oldest = &b;
  }
  if (oldest == nullptr) return {};  // every buffer held by a caller: copy without staging
  const int index = static_cast<int>(oldest - buffers_.data());
  oldest->state = State::kHeld;  // no other caller takes it while this one waits
  lock.unlock();
  device_.wait(index);
  return {oldest->data, index};
}

void StagingRing::release(const Slot& slot) {
  if (slot.data == nullptr) return;
  const std::lock_guard lock(mutex_);
  Buffer& b = buffers_.at(static_cast<size_t>(slot.index));
  device_.mark(slot.index);
  b.state = State::kInFlight;
  b.order = ++releases_;
}

void StagingRing::fence(const Slot& slot) {
  if (slot.data == nullptr) return;
  const std::lock_guard lock(mutex_);
  device_.mark(slot.index);
}

void StagingRing::wait_held(const Slot& slot) {
  if (slot.data != nullptr) device_.wait(slot.index);
}

void StagingRing::give_back(const Slot& slot) {
  if (slot.data == nullptr) return;
  const std::lock_guard lock(mutex_);
  buffers_.at(static_cast<size_t>(slot.index)).state = State::kFree;
}

std::vector<std::pair<size_t, size_t>> StagingRing::chunks(size_t bytes, size_t chunk) {
  std::vector<std::pair<size_t, size_t>> out;
  for (size_t at = 0; at < bytes; at += chunk) out.emplace_back(at, std::min(chunk, bytes - at));
  return out;
}

}  // namespace spmd::kernels::cuda
