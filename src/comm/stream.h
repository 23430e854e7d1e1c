// One direction (or both) of the link between two processes: an ordered byte stream that never
// blocks. Shared-memory rings, TCP sockets and UCX endpoints implement it; the exchange engine
// (exchange.h) moves framed messages over it, so every algorithm is written once for every
// transport (Gloo's split between algorithms and transports).
//
// Not thread-safe: a stream is driven by one thread at a time (the process group's lock).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "comm/message_header.h"

namespace spmd {

class Waiter;

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

  // By reference: large payloads leave the writer's memory only once, straight into the reader's
  // destination — read from a mapping of the writer's shared buffer (shared_buffers.h) or with
  // process_vm_readv over shared memory, a UCX rendezvous (zero copy from registered memory) over
  // UCX. The frame on the stream then carries a ReferenceBody instead of the payload. True when
  // this stream's payloads may travel that way.
  virtual bool by_reference() const { return false; }
  // Writer: starts sharing payload `ticket` (1, 2, … on this stream's shared payloads), `bytes`
  // at `data`, which stays untouched until references_done() reaches the ticket; returns the body
  // its frame carries, or nullopt when this payload must go on the stream itself (over shared
  // memory: one outside the shared buffers where only they can be shared). The default, for
  // streams without references: nullopt.
  virtual std::optional<ReferenceBody> offer_reference(const std::byte* data, size_t bytes,
                                                       uint64_t ticket);
  // Writer: how many by-reference payloads the reader has finished receiving (in ticket order).
  virtual uint64_t references_done() { return 0; }
  // Reader: the next by-reference payload on this stream (after those already expected) will be
  // `bytes` long, for `dst` (null: for a sink). A stream that can start receiving it before its
  // frame arrives does so (UCX posts the receive, so the transfer starts as soon as the writer
  // offers it); the others need nothing.
  virtual void expect_reference(std::byte* dst, size_t bytes) {}
  // Reader: how much of a `bytes`-long payload fetch_reference() takes at once: pieces for a
  // sink that reduces as they come (shared memory), or the whole payload (UCX, one message).
  virtual size_t reference_piece(size_t bytes) const { return bytes; }
  // Reader: bytes [offset, offset + n) of the payload `body` names, waiting through `waiter`
  // (its deadline and abort check); returns where they are: `dst`, the stream's own buffer (for
  // a payload expected for a sink), or a mapping of the writer's memory, valid until the next
  // call. A caller that needs them at `dst` copies them from anywhere else, and reads a mapping
  // under catching_bus_errors() (runtime/bus_error_guard.h): the writer may free the buffer
  // under it after a failure. Throws spmd::Error when the payload cannot be had (the writer
  // died, the body is not the writer's or not the one expected), DeadlineExceeded at the
  // deadline.
  virtual const std::byte* fetch_reference(const ReferenceBody& body, size_t offset, std::byte* dst,
                                           size_t n, Waiter& waiter);
  // Reader: one by-reference payload fetched whole; the writer may reuse its buffer.
  virtual void reference_done() {}

  // Shared buffers both ways: whether each end of this link reaches the other's shared buffers
  // (comm memory, shared_buffers.h) itself. group_setup.cc probes it once per host, so the answer
  // is the same at both ends of a link and on every link within a host.
  virtual bool maps_buffers() const { return false; }
  // Writer: a body naming [data, data + bytes) in this process's shared buffers, for the reader
  // to reach with reach_shared(); nullopt when the range lies in none or the link does not map
  // buffers. Unlike offer_reference(), the stream keeps no account of it: the caller's own
  // messages tell the peer when it may touch the range and the caller when the peer is done.
  virtual std::optional<ReferenceBody> share(const std::byte* data, size_t bytes) {
    return std::nullopt;
  }
  // Reader: where bytes [offset, offset + n) of the range a body from the writer's share() names
  // lie in this process's mapping of it, for `access` (counted: comm_memory.h). Touch it under
  // catching_bus_errors() (runtime/bus_error_guard.h), as fetch_reference() says. Throws
  // spmd::Error when the body is not the writer's, names a range outside its buffer, or the link
  // does not map buffers.
  virtual std::byte* reach_shared(const ReferenceBody& body, size_t offset, size_t n,
                                  PeerAccess access);

  // After a failed call: stops every transfer that still uses a caller's buffer, so the caller
  // may free it (UCX's posted operations). Never throws.
  virtual void cancel() noexcept {}

  // "shm", "tcp" or "ucx", for messages and benchmark rows.
  virtual const char* transport() const = 0;
};

}  // namespace spmd
