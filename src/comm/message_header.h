// The header in front of every message of the data plane, on shared memory and TCP alike.
//
// It carries the call's fingerprint, so the first message of a call between two processes is
// also the check that they make the same call, and the payload length, checked against what the
// receiver expects before a byte of payload is read. 48 bytes, in host byte order: processes of
// one cluster share an architecture (every supported one is little-endian).
#pragma once

#include <cstdint>
#include <cstring>

#include "comm/fingerprint.h"

namespace spmd {

inline constexpr uint32_t kMessageMagic = 0x434d5053;  // "SPMC"

enum class MessageKind : uint8_t {
  kData = 1,  // the call's payload follows
  // Some participant's call differs: `fingerprint` is that call, `length` the index of the
  // process that made it; no payload follows.
  kMismatch = 2,
  // The payload stays in the sender's memory: a ReferenceBody follows, and the receiver fetches
  // `length` bytes through the stream (a mapping of the sender's shared buffer or
  // process_vm_readv over shared memory, a UCX rendezvous), then tells the sender (stream.h,
  // by_reference()).
  kReference = 3,
};

struct ReferenceBody {
  // Shared memory: the sender's pid, checked against the link's. UCX: the tag of the message
  // carrying the payload, which names the sender's position and the ticket.
  uint64_t key = 0;
  uint64_t address = 0;  // of the payload in the sender
  // Shared memory, a payload in one of the sender's shared buffers (shared_buffers.h): the
  // buffer's id, the payload's offset in it and the sender's descriptor for it, which the
  // receiver takes to map the buffer (peer_mappings.h). buffer 0: none; the receiver reads the
  // payload with process_vm_readv.
  uint64_t buffer = 0;
  uint64_t buffer_offset = 0;
  int32_t buffer_fd = -1;
  uint32_t reserved = 0;
};
static_assert(sizeof(ReferenceBody) == 40, "the reference body is part of the wire format");

// What a process does with a range of a peer's shared buffer that a body names: read a payload
// out of it, or write results into it (mapped_all_reduce.cc). Counted apart (comm_memory.h).
enum class PeerAccess : uint8_t { kRead, kWrite };

struct MessageHeader {
  uint32_t magic = kMessageMagic;
  MessageKind kind = MessageKind::kData;
  uint8_t reserved[3] = {};
  uint64_t length = 0;  // payload bytes that follow (kData)
  FingerprintBytes fingerprint{};
};
static_assert(sizeof(MessageHeader) == 48, "the header is part of the wire format");

}  // namespace spmd
