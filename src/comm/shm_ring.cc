#include "comm/shm_ring.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "spmd/error.h"

namespace spmd {

ShmRingWriter::ShmRingWriter(std::byte* base, size_t capacity, std::string peer)
    : control_(reinterpret_cast<RingControl*>(base)),
      data_(base + sizeof(RingControl)),
      capacity_(capacity),
      peer_(std::move(peer)) {
  tail_ = control_->tail.load(std::memory_order_relaxed);
  cached_head_ = control_->head.load(std::memory_order_acquire);
}

size_t ShmRingWriter::write_some(std::span<const std::byte> first,
                                 std::span<const std::byte> second) {
  const uint64_t want = first.size() + second.size();
  if (tail_ - cached_head_ + want > capacity_) {
    cached_head_ = control_->head.load(std::memory_order_acquire);
    if (cached_head_ > tail_ || tail_ - cached_head_ > capacity_) {
      throw Error(fmt::format("the shared-memory ring to {} is corrupt (head {} beyond tail {})",
                              peer_, cached_head_, tail_));
    }
  }
  uint64_t room = capacity_ - (tail_ - cached_head_);
  if (room == 0) return 0;
  size_t taken = 0;
  for (std::span<const std::byte> piece : {first, second}) {
    size_t n = std::min<uint64_t>(piece.size(), room);
    const std::byte* src = piece.data();
    while (n > 0) {
      const uint64_t at = tail_ & (capacity_ - 1);
      const size_t run = std::min<uint64_t>(n, capacity_ - at);
      std::memcpy(data_ + at, src, run);
      src += run;
      n -= run;
      tail_ += run;
      room -= run;
      taken += run;
    }
    if (room == 0) break;
  }
  if (taken > 0) control_->tail.store(tail_, std::memory_order_release);
  return taken;
}

ShmRingReader::ShmRingReader(std::byte* base, size_t capacity, std::string peer)
    : control_(reinterpret_cast<RingControl*>(base)),
      data_(base + sizeof(RingControl)),
      capacity_(capacity),
      peer_(std::move(peer)) {
  head_ = control_->head.load(std::memory_order_relaxed);
  cached_tail_ = control_->tail.load(std::memory_order_acquire);
}

std::span<const std::byte> ShmRingReader::readable() {
  if (cached_tail_ == head_) {
    cached_tail_ = control_->tail.load(std::memory_order_acquire);
    if (cached_tail_ < head_ || cached_tail_ - head_ > capacity_) {
      throw Error(fmt::format("the shared-memory ring from {} is corrupt (tail {}, head {})", peer_,
                              cached_tail_, head_));
    }
  }
  const uint64_t at = head_ & (capacity_ - 1);
  const uint64_t run = std::min<uint64_t>(cached_tail_ - head_, capacity_ - at);
  return {data_ + at, static_cast<size_t>(run)};
}

void ShmRingReader::consume(size_t n) {
  head_ += n;
  control_->head.store(head_, std::memory_order_release);
}

}  // namespace spmd
