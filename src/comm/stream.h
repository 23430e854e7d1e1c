// One direction (or both) of the link between two processes: an ordered byte stream that never
// blocks. Shared-memory rings and TCP sockets implement it; the exchange engine (exchange.h) moves
// framed messages over it, so every algorithm is written once for both transports (Gloo's split
// between algorithms and transports).
//
// Not thread-safe: a stream is driven by one thread at a time (the process group's lock).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace spmd {

class Stream {
 public:
  virtual ~Stream() = default;

  // Appends a prefix of `first` followed by `second` (as much as fits now) and returns how many
  // bytes were taken, 0 when there is no room. Throws spmd::Error when the link is broken.
  virtual size_t write_some(std::span<const std::byte> first,
                            std::span<const std::byte> second) = 0;

  // Bytes that can be read now, contiguous (possibly fewer than all that are available); empty
  // when none. Valid until the next consume() or read call. Throws when the link is broken or
  // the peer closed it.
  virtual std::span<const std::byte> readable() = 0;

  // Releases the first `n` bytes of readable().
  virtual void consume(size_t n) = 0;

  // Reads up to `n` bytes straight into `dst` when the stream can do that without staging (TCP
  // with nothing buffered); returns how many, 0 when it would rather go through readable().
  virtual size_t read_direct(std::byte* dst, size_t n) { return 0; }

  // A file descriptor to poll() for readability while idle, or -1 (shared memory).
  virtual int poll_fd() const { return -1; }

  // Every socket under the stream (none for shared memory), for a graceful close.
  virtual std::vector<int> sockets() const {
    const int fd = poll_fd();
    return fd >= 0 ? std::vector<int>{fd} : std::vector<int>{};
  }

  // Single copy (shared memory, process_vm_readv): true when large payloads may travel by
  // reference — the reader copies them straight out of the writer's memory.
  virtual bool by_reference() const { return false; }
  // Reader: the pid of the writer, whose memory references point into.
  virtual int64_t peer_pid() const { return 0; }
  // Writer: how many by-reference payloads the reader has finished copying.
  virtual uint64_t references_done() const { return 0; }
  // Reader: one by-reference payload copied; the writer may reuse its buffer.
  virtual void reference_done() {}

  // "shm" or "tcp", for messages and benchmark rows.
  virtual const char* transport() const = 0;
};

}  // namespace spmd
