#include "kernels/cuda/replay_plan.h"

#include <algorithm>
#include <functional>

namespace spmd::kernels::cuda {

std::byte* BumpArena::take(size_t bytes) {
  if (bytes == 0) return nullptr;
  const size_t size = rounded(bytes);
  asked_ += size;
  if (size > capacity_ - used_) return nullptr;
  std::byte* p = base_ + used_;
  used_ += size;
  return p;
}

bool BumpArena::holds(const void* p) const {
  // std::less gives a total order over unrelated pointers, as < need not.
  const auto* q = static_cast<const std::byte*>(p);
  return !std::less<const std::byte*>{}(q, base_) &&
         std::less<const std::byte*>{}(q, base_ + capacity_);
}

void ReplayPolicy::size_for(size_t asked) {
  const size_t wanted = BumpArena::rounded(asked + asked / 8);
  if (wanted > most_bytes_) {
    mode_ = Mode::kDirect;
    return;
  }
  arena_bytes_ = wanted;  // 0 for a call that allocates nothing: it needs no arena
  mode_ = Mode::kCapture;
}

void ReplayPolicy::measured(size_t asked) {
  if (mode_ == Mode::kMeasure) size_for(asked);
}

void ReplayPolicy::overflowed(size_t asked) {
  if (mode_ != Mode::kCapture) return;
  if (++overflows_ >= kMostOverflows) {
    mode_ = Mode::kDirect;
    return;
  }
  // The capture stopped at the piece that did not fit: what it asked for is a floor.
  size_for(std::max(asked, arena_bytes_) * 2);
}

int GraphSlots::find(std::span<const void* const> key) const {
  if (key.empty()) return -1;
  for (int i = 0; i < kSlots; ++i) {
    const auto& k = keys_[static_cast<size_t>(i)];
    if (!empty(i) && std::equal(k.begin(), k.end(), key.begin(), key.end())) return i;
  }
  return -1;
}

int GraphSlots::victim() const {
  int oldest = 0;
  for (int i = 0; i < kSlots; ++i) {
    if (empty(i)) return i;
    if (used_[static_cast<size_t>(i)] < used_[static_cast<size_t>(oldest)]) oldest = i;
  }
  return oldest;
}

void GraphSlots::set(int slot, std::span<const void* const> key) {
  keys_[static_cast<size_t>(slot)].assign(key.begin(), key.end());
  touch(slot);
}

void GraphSlots::clear() {
  for (auto& k : keys_) k.clear();
  used_.fill(0);
}

}  // namespace spmd::kernels::cuda
