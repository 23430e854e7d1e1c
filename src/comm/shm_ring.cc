#include "comm/shm_ring.h"

#include <fmt/format.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "comm/shared_buffers.h"
#include "spmd/error.h"

namespace spmd {
namespace {

constexpr uint64_t kLaneMask = kLaneSlots - 1;
static_assert((kLaneSlots & kLaneMask) == 0, "the lane's slot count is a power of two");

// The stamp of the slot that holds stream slot number `slot` with `bytes` in it.
constexpr uint64_t stamp_of(uint64_t slot, uint64_t bytes) { return (slot + 1) << 8 | bytes; }
constexpr uint64_t slot_of(uint64_t stamp) { return (stamp >> 8) - 1; }

}  // namespace

ShmRingWriter::ShmRingWriter(std::byte* base, size_t capacity, std::string peer)
    : control_(reinterpret_cast<RingControl*>(base)),
      lane_(reinterpret_cast<LaneSlot*>(base + sizeof(RingControl))),
      data_(base + sizeof(RingControl) + kLaneSlots * sizeof(LaneSlot)),
      capacity_(capacity),
      peer_(std::move(peer)) {
  tail_ = control_->tail.load(std::memory_order_relaxed);
  cached_head_ = control_->head.load(std::memory_order_acquire);
  lane_tail_ = cached_lane_head_ = control_->lane_head.load(std::memory_order_acquire);
}

void ShmRingWriter::load_head() {
  cached_head_ = control_->head.load(std::memory_order_acquire);
  if (cached_head_ > tail_ || tail_ - cached_head_ > capacity_) {
    throw Error(fmt::format("the shared-memory ring to {} is corrupt (head {} beyond tail {})",
                            peer_, cached_head_, tail_));
  }
}

bool ShmRingWriter::ring_drained() {
  if (cached_head_ == tail_) return true;
  load_head();
  return cached_head_ == tail_;
}

uint64_t ShmRingWriter::load_lane_head() {
  const uint64_t head = control_->lane_head.load(std::memory_order_acquire);
  if (head > lane_tail_ || head < cached_lane_head_) {
    throw Error(fmt::format(
        "the shared-memory lane to {} is corrupt (head {}, {} slots written, {} seen consumed)",
        peer_, head, lane_tail_, cached_lane_head_));
  }
  return head;
}

bool ShmRingWriter::lane_drained() {
  if (cached_lane_head_ == lane_tail_) return true;
  cached_lane_head_ = load_lane_head();
  return cached_lane_head_ == lane_tail_;
}

size_t ShmRingWriter::write_some(std::span<const std::byte> first,
                                 std::span<const std::byte> second) {
  const uint64_t want = first.size() + second.size();
  if (want == 0) return 0;
  // Slots the reader may not have consumed mean the ring is drained: the lane was last written
  // while it was, and the ring not since.
  if (want <= kLaneBytes && (cached_lane_head_ != lane_tail_ || ring_drained())) {
    return write_lane(first, second);
  }
  if (!lane_drained()) return 0;
  return write_ring(first, second);
}

size_t ShmRingWriter::write_lane(std::span<const std::byte> first,
                                 std::span<const std::byte> second) {
  if (lane_tail_ - cached_lane_head_ == kLaneSlots) {
    cached_lane_head_ = load_lane_head();
    if (lane_tail_ - cached_lane_head_ == kLaneSlots) return 0;
  }
  LaneSlot& slot = lane_[lane_tail_ & kLaneMask];
  if (!first.empty()) std::memcpy(slot.data, first.data(), first.size());
  if (!second.empty()) std::memcpy(slot.data + first.size(), second.data(), second.size());
  const uint64_t bytes = first.size() + second.size();
  slot.stamp.store(stamp_of(lane_tail_, bytes), std::memory_order_release);
  ++lane_tail_;
  return bytes;
}

size_t ShmRingWriter::write_ring(std::span<const std::byte> first,
                                 std::span<const std::byte> second) {
  const uint64_t want = first.size() + second.size();
  if (tail_ - cached_head_ + want > capacity_) load_head();
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
      lane_(reinterpret_cast<const LaneSlot*>(base + sizeof(RingControl))),
      data_(base + sizeof(RingControl) + kLaneSlots * sizeof(LaneSlot)),
      capacity_(capacity),
      peer_(std::move(peer)) {
  head_ = control_->head.load(std::memory_order_relaxed);
  cached_tail_ = control_->tail.load(std::memory_order_acquire);
  lane_head_ = control_->lane_head.load(std::memory_order_relaxed);
}

void ShmRingReader::corrupt(const std::string& what) const {
  throw Error(fmt::format("the shared-memory stream from {} is corrupt ({})", peer_, what));
}

std::span<const std::byte> ShmRingReader::readable() {
  if (slot_bytes_ != 0) {
    return {lane_[lane_head_ & kLaneMask].data + slot_consumed_, slot_bytes_ - slot_consumed_};
  }
  if (cached_tail_ == head_) {
    // The lane first: a small message that waits there costs one cache line.
    const LaneSlot& slot = lane_[lane_head_ & kLaneMask];
    const uint64_t stamp = slot.stamp.load(std::memory_order_acquire);
    if (stamp != 0 && slot_of(stamp) == lane_head_) {
      const uint64_t bytes = stamp & 0xff;
      if (bytes == 0 || bytes > kLaneBytes) {
        corrupt(fmt::format("a lane slot claims {} bytes", bytes));
      }
      // The writer fills one lane at a time: the ring must be drained.
      const uint64_t tail = control_->tail.load(std::memory_order_relaxed);
      if (tail != head_) {
        corrupt(fmt::format("ring data (tail {}, head {}) beside a lane slot", tail, head_));
      }
      slot_bytes_ = bytes;
      slot_consumed_ = 0;
      return {slot.data, static_cast<size_t>(bytes)};
    }
    cached_tail_ = control_->tail.load(std::memory_order_acquire);
    if (cached_tail_ < head_ || cached_tail_ - head_ > capacity_) {
      corrupt(fmt::format("tail {}, head {}", cached_tail_, head_));
    }
  }
  const uint64_t at = head_ & (capacity_ - 1);
  const uint64_t run = std::min<uint64_t>(cached_tail_ - head_, capacity_ - at);
  return {data_ + at, static_cast<size_t>(run)};
}

void ShmRingReader::consume(size_t n) {
  if (slot_bytes_ != 0) {
    slot_consumed_ += n;
    if (slot_consumed_ >= slot_bytes_) {
      slot_bytes_ = 0;
      ++lane_head_;
      control_->lane_head.store(lane_head_, std::memory_order_release);
    }
    return;
  }
  head_ += n;
  control_->head.store(head_, std::memory_order_release);
}

std::optional<ReferenceBody> ShmRingWriter::offer_reference(const std::byte* data, size_t bytes,
                                                            uint64_t ticket) {
  if (std::optional<ReferenceBody> body = share(data, bytes)) return body;
  if (!copies_memory_) return std::nullopt;
  ReferenceBody body;
  body.key = static_cast<uint64_t>(::getpid());
  body.address = reinterpret_cast<uint64_t>(data);
  return body;
}

std::optional<ReferenceBody> ShmRingWriter::share(const std::byte* data, size_t bytes) {
  if (!maps_buffers_) return std::nullopt;
  const std::optional<SharedSpan> span = find_shared(data, bytes);
  if (!span) return std::nullopt;
  ReferenceBody body;
  body.key = static_cast<uint64_t>(::getpid());
  body.address = reinterpret_cast<uint64_t>(data);
  body.buffer = span->id;
  body.buffer_offset = span->offset;
  body.buffer_fd = span->fd;
  return body;
}

void ShmRingReader::enable_references(int64_t writer_pid, bool copies_memory, bool maps_buffers) {
  peer_pid_ = writer_pid;
  copies_memory_ = copies_memory;
  if (maps_buffers) mappings_ = std::make_unique<PeerMappings>(writer_pid, peer_);
}

const std::byte* ShmRingReader::fetch_reference(const ReferenceBody& body, size_t offset,
                                                std::byte* dst, size_t n, Waiter& waiter) {
  if (body.buffer != 0) {
    check_shared(body);
    return mappings_->locate(body, offset, n);
  }
  if (body.key != static_cast<uint64_t>(peer_pid_)) {
    throw Error(
        fmt::format("{} sent a by-reference payload naming pid {}, not its own", peer_, body.key));
  }
  if (!copies_memory_) {
    throw Error(fmt::format(
        "{} sent a payload by address, which this process does not copy (SPMD_SHM_SINGLE_COPY "
        "differs between the processes?)",
        peer_));
  }
  size_t got = 0;
  while (got < n) {
    iovec local{dst + got, n - got};
    // An address in the peer, never dereferenced here: the kernel checks it.
    // NOLINTNEXTLINE(performance-no-int-to-ptr)
    iovec remote{reinterpret_cast<void*>(body.address + offset + got), n - got};
    const ssize_t r = ::process_vm_readv(static_cast<pid_t>(peer_pid_), &local, 1, &remote, 1, 0);
    if (r <= 0) {
      throw Error(fmt::format("cannot read the payload {} shares by reference: {}", peer_,
                              r == 0 ? "nothing read" : std::strerror(errno)));
    }
    got += static_cast<size_t>(r);
  }
  return dst;
}

std::byte* ShmRingReader::reach_shared(const ReferenceBody& body, size_t offset, size_t n,
                                       PeerAccess access) {
  check_shared(body);
  return mappings_->reach(body, offset, n, access);
}

void ShmRingReader::check_shared(const ReferenceBody& body) const {
  if (body.key != static_cast<uint64_t>(peer_pid_)) {
    throw Error(
        fmt::format("{} sent a by-reference payload naming pid {}, not its own", peer_, body.key));
  }
  if (body.buffer == 0) {
    throw Error(fmt::format("{} named a range outside its shared buffers", peer_));
  }
  if (mappings_ == nullptr) {
    throw Error(
        fmt::format("{} sent a payload in its shared buffer {}, which this process does not map",
                    peer_, body.buffer));
  }
}

}  // namespace spmd
