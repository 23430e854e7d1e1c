// The shared buffers (shared_buffers.h) of one same-host peer that this process reads payloads
// from: each taken from the peer with pidfd_getfd(2) the first time a payload names it, checked
// (its memfd name carries the id the payload names), mapped, and kept for the next payload from
// the same buffer. Mappings are read-write: a collective may write its results straight into a
// peer's output (mapped_all_reduce.cc), as the peer's messages allow. Taking a descriptor needs the
// same permission as process_vm_readv(2) (ptrace access to the peer), which group_setup.cc probes
// before any payload goes this way.
//
// The peer controls the bodies that name its buffers: everything in one is checked against the
// mapping before a pointer is handed out, and a body that does not fit is an error, never a read
// outside the mapping. A buffer the peer frees is truncated to nothing (shared_buffers.h), so a
// stale mapping here holds no memory; at most kMaxMappings stay mapped, the least recently used
// unmapped first.
//
// Not thread-safe: the reader's stream uses it under the process group's lock.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>

#include "comm/message_header.h"

namespace spmd {

class PeerMappings {
 public:
  // For the process `pid`, named `peer` in errors. Throws spmd::Error when the process cannot be
  // opened (pidfd_open).
  PeerMappings(int64_t pid, std::string peer);
  ~PeerMappings();
  PeerMappings(const PeerMappings&) = delete;
  PeerMappings& operator=(const PeerMappings&) = delete;

  // Where bytes [offset, offset + n) of the payload `body` names are readable here. Throws
  // spmd::Error when the body names no buffer of the peer's or a range outside it, or when the
  // buffer cannot be taken or mapped.
  const std::byte* locate(const ReferenceBody& body, size_t offset, size_t n);

  // Where bytes [offset, offset + n) of the range `body` names lie here, for one access of the
  // kind given, counted as one payload read from or written to the peer. Throws as locate() does.
  std::byte* reach(const ReferenceBody& body, size_t offset, size_t n, PeerAccess access);

  // Whether this process can take the peer `pid`'s buffer `id` from its descriptor `fd` and
  // read `word` at its start: the probe of group_setup.cc.
  static bool can_map(int64_t pid, int fd, uint64_t id, uint64_t word);

  static constexpr size_t kMaxMappings = 1024;

 private:
  struct Mapping {
    std::byte* base = nullptr;
    size_t size = 0;
    uint64_t last_use = 0;
  };
  const Mapping& map(const ReferenceBody& body);
  // Bytes [offset, offset + n) of the range `body` names, checked against its mapping.
  std::byte* at(const ReferenceBody& body, size_t offset, size_t n);
  void evict_one();

  int pidfd_ = -1;
  std::string peer_;
  std::unordered_map<uint64_t, Mapping> by_id_;
  uint64_t uses_ = 0;
};

// Payloads read and written through mappings of peers' buffers by this process, and buffers
// mapped, ever.
struct PeerMappingCounts {
  uint64_t payloads = 0;
  uint64_t bytes = 0;
  uint64_t mappings = 0;
  uint64_t written_payloads = 0;
  uint64_t written_bytes = 0;
};
PeerMappingCounts peer_mapping_counts();

}  // namespace spmd
