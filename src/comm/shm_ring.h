// A single-producer single-consumer byte ring in shared memory: the shm transport's stream from
// one process to another on the same host.
//
// The ring lives in the receiver's segment. Head and tail are monotonic byte counters on
// cache lines of their own; the writer publishes with a release store of the tail, the reader
// with a release store of the head, so a small message costs one cache-line transfer each way.
// The reader checks the counters it reads from the peer (tail - head never exceeds the
// capacity): memory a peer writes is validated like bytes from the network.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "comm/stream.h"

namespace spmd {

struct alignas(64) RingControl {
  std::atomic<uint64_t> tail;  // bytes ever written; written by the producer
  char pad0[56];
  std::atomic<uint64_t> head;  // bytes ever consumed; written by the consumer
  char pad1[56];
  std::atomic<uint64_t> references;  // by-reference payloads copied; written by the consumer
  char pad2[56];
};
static_assert(sizeof(RingControl) == 192);

// The bytes one ring of `capacity` occupies in a segment (control block + data).
constexpr size_t ring_footprint(size_t capacity) { return sizeof(RingControl) + capacity; }

// Both ends of one ring. `base` points at ring_footprint(capacity) bytes of a mapping that
// outlives this object, zero-filled when the ring is new; `capacity` is a power of two.
// `peer` names the other process in errors.
class ShmRingWriter final : public Stream {
 public:
  ShmRingWriter(std::byte* base, size_t capacity, std::string peer);
  size_t write_some(std::span<const std::byte> first, std::span<const std::byte> second) override;
  std::span<const std::byte> readable() override { return {}; }
  void consume(size_t) override {}
  const char* transport() const override { return "shm"; }
  bool by_reference() const override { return by_reference_; }
  uint64_t references_done() const override {
    return control_->references.load(std::memory_order_acquire);
  }
  // The reader can read this process's memory (group_setup.cc probed it).
  void enable_references() { by_reference_ = true; }

 private:
  RingControl* control_;
  std::byte* data_;
  bool by_reference_ = false;
  uint64_t capacity_;
  uint64_t tail_ = 0;         // mine; published to control_->tail
  uint64_t cached_head_ = 0;  // last head seen
  std::string peer_;
};

class ShmRingReader final : public Stream {
 public:
  ShmRingReader(std::byte* base, size_t capacity, std::string peer);
  size_t write_some(std::span<const std::byte>, std::span<const std::byte>) override { return 0; }
  std::span<const std::byte> readable() override;
  void consume(size_t n) override;
  const char* transport() const override { return "shm"; }
  bool by_reference() const override { return peer_pid_ != 0; }
  int64_t peer_pid() const override { return peer_pid_; }
  void reference_done() override { control_->references.fetch_add(1, std::memory_order_release); }
  // This process can read the writer's memory (group_setup.cc probed it).
  void enable_references(int64_t writer_pid) { peer_pid_ = writer_pid; }

 private:
  RingControl* control_;
  const std::byte* data_;
  int64_t peer_pid_ = 0;
  uint64_t capacity_;
  uint64_t head_ = 0;         // mine; published to control_->head
  uint64_t cached_tail_ = 0;  // last tail seen
  std::string peer_;
};

}  // namespace spmd
