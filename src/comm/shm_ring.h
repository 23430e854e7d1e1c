// A single-producer single-consumer byte stream in shared memory: the shm transport's stream
// from one process to another on the same host.
//
// The stream travels in two lanes that live in the receiver's segment:
// - the ring: a byte ring whose head and tail are monotonic byte counters on cache lines of their
//   own; the writer publishes with a release store of the tail, the reader with a release store
//   of the head. Any amount of data; a message costs the reader two cache lines from the writer
//   (the tail, then the data).
// - the lane: slots of one cache line, each holding up to kLaneBytes of the stream and, in its
//   last word, a stamp naming the slot's place in the stream. The reader polls the slot it
//   expects next, so a small message — a scalar all-reduce, a barrier — costs one cache line
//   (Open MPI's "fast box").
// The writer puts a write into the lane only while the ring is drained (the reader has consumed
// all of it) and into the ring only while the lane is drained, so at any moment at most one
// lane holds unread bytes and the stream's order is kept without sequence numbers.
//
// The reader checks everything it reads from the peer (counters, stamps, slot lengths, the
// one-lane rule): memory a peer writes is validated like bytes from the network.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "comm/peer_mappings.h"
#include "comm/stream.h"

namespace spmd {

struct alignas(64) RingControl {
  std::atomic<uint64_t> tail;  // ring bytes ever written; written by the producer
  char pad0[56];
  std::atomic<uint64_t> head;  // ring bytes ever consumed; written by the consumer
  char pad1[56];
  std::atomic<uint64_t> references;  // by-reference payloads copied; written by the consumer
  char pad2[56];
  std::atomic<uint64_t> lane_head;  // lane slots ever consumed; written by the consumer
  char pad3[56];
};
static_assert(sizeof(RingControl) == 256);

// The most bytes one lane slot carries.
inline constexpr size_t kLaneBytes = 56;

struct alignas(64) LaneSlot {
  std::byte data[kLaneBytes];
  // (the slot's number in the stream + 1) << 8 | bytes in it; stored last, with release.
  std::atomic<uint64_t> stamp;
};
static_assert(sizeof(LaneSlot) == 64);

// Slots in the lane: enough for a burst of small messages (a call to many peers writes one to
// each of them, not several to one).
inline constexpr size_t kLaneSlots = 32;

// The bytes one stream of ring `capacity` occupies in a segment (control block, lane, ring).
constexpr size_t ring_footprint(size_t capacity) {
  return sizeof(RingControl) + kLaneSlots * sizeof(LaneSlot) + capacity;
}

// Both ends of one stream. `base` points at ring_footprint(capacity) bytes of a mapping that
// outlives this object, zero-filled when the stream is new; `capacity` is a power of two.
// `peer` names the other process in errors.
class ShmRingWriter final : public Stream {
 public:
  ShmRingWriter(std::byte* base, size_t capacity, std::string peer);
  // Writes of up to kLaneBytes go whole into the lane while the ring is drained; anything else
  // into the ring once the lane is drained. Returns 0 while the lane that must take the write
  // is full or the other is not yet drained.
  size_t write_some(std::span<const std::byte> first, std::span<const std::byte> second) override;
  std::span<const std::byte> readable() override { return {}; }
  void consume(size_t) override {}
  const char* transport() const override { return "shm"; }
  bool by_reference() const override { return copies_memory_ || maps_buffers_; }
  // A payload inside one of this process's shared buffers goes as that buffer's id, offset and
  // descriptor where the reader maps buffers; any other as its address where the reader copies
  // memory; else nullopt (through the ring).
  std::optional<ReferenceBody> offer_reference(const std::byte* data, size_t bytes,
                                               uint64_t ticket) override;
  uint64_t references_done() override {
    return control_->references.load(std::memory_order_acquire);
  }
  bool maps_buffers() const override { return maps_buffers_; }
  std::optional<ReferenceBody> share(const std::byte* data, size_t bytes) override;
  // What the reader can do with this process's memory (group_setup.cc probed it): copy any of it
  // (process_vm_readv, SPMD_SHM_SINGLE_COPY), map its shared buffers.
  void enable_references(bool copies_memory, bool maps_buffers) {
    copies_memory_ = copies_memory;
    maps_buffers_ = maps_buffers;
  }

 private:
  // The ring's head as the reader published it, checked, into cached_head_.
  void load_head();
  bool ring_drained();
  bool lane_drained();
  // The lane's head as the reader published it, checked.
  uint64_t load_lane_head();
  size_t write_lane(std::span<const std::byte> first, std::span<const std::byte> second);
  size_t write_ring(std::span<const std::byte> first, std::span<const std::byte> second);

  RingControl* control_;
  LaneSlot* lane_;
  std::byte* data_;
  bool copies_memory_ = false;
  bool maps_buffers_ = false;
  uint64_t capacity_;
  uint64_t tail_ = 0;              // mine; published to control_->tail
  uint64_t cached_head_ = 0;       // last head seen
  uint64_t lane_tail_ = 0;         // slots written
  uint64_t cached_lane_head_ = 0;  // last lane head seen
  std::string peer_;
};

class ShmRingReader final : public Stream {
 public:
  ShmRingReader(std::byte* base, size_t capacity, std::string peer);
  size_t write_some(std::span<const std::byte>, std::span<const std::byte>) override { return 0; }
  std::span<const std::byte> readable() override;
  void consume(size_t n) override;
  const char* transport() const override { return "shm"; }
  bool by_reference() const override { return copies_memory_ || mappings_ != nullptr; }
  // Pieces of 256 KiB, which stay in cache while a sink reduces them.
  size_t reference_piece(size_t bytes) const override { return size_t{256} << 10; }
  // A body naming a shared buffer: where the payload lies in this process's mapping of it. Any
  // other: copied into `dst` with process_vm_readv. Either only where enabled.
  const std::byte* fetch_reference(const ReferenceBody& body, size_t offset, std::byte* dst,
                                   size_t n, Waiter& waiter) override;
  void reference_done() override { control_->references.fetch_add(1, std::memory_order_release); }
  bool maps_buffers() const override { return mappings_ != nullptr; }
  std::byte* reach_shared(const ReferenceBody& body, size_t offset, size_t n,
                          PeerAccess access) override;
  // What this process can do with the writer's memory (group_setup.cc probed it): copy any of it
  // with process_vm_readv, map its shared buffers. Throws spmd::Error when the writer cannot be
  // opened for mapping.
  void enable_references(int64_t writer_pid, bool copies_memory, bool maps_buffers);

 private:
  [[noreturn]] void corrupt(const std::string& what) const;
  // Throws unless `body` names the writer and one of its shared buffers, which this process maps.
  void check_shared(const ReferenceBody& body) const;

  RingControl* control_;
  const LaneSlot* lane_;
  const std::byte* data_;
  int64_t peer_pid_ = 0;
  bool copies_memory_ = false;
  std::unique_ptr<PeerMappings> mappings_;
  uint64_t capacity_;
  uint64_t head_ = 0;         // mine; published to control_->head
  uint64_t cached_tail_ = 0;  // last tail seen
  uint64_t lane_head_ = 0;    // slots consumed; published to control_->lane_head
  // The slot being read: its length (0 when none) and how much of it was consumed.
  uint64_t slot_bytes_ = 0;
  uint64_t slot_consumed_ = 0;
  std::string peer_;
};

}  // namespace spmd
