// Host buffers that processes of this host can map: the memory behind spmd/comm_memory.h. Each
// buffer is a memfd of its own, mapped shared here and kept open, so that a peer of the same job
// can take the descriptor with pidfd_getfd(2) and map the buffer itself (comm/peer_mappings.h). A
// collective's payload in such a buffer goes by reference over the shared-memory transport: the
// reader reduces or copies it straight out of the writer's memory, one copy per byte instead of
// two through the rings.
//
// Freeing a buffer truncates its file before unmapping it: the pages go back to the system at
// once even where a peer still maps the file, so a peer's mapping never pins memory its owner let
// go, and a peer that reads a freed buffer gets SIGBUS (reported there as an error) rather than
// stale bytes. Ids count up from 1 and are never reused, so no peer can take a new buffer for an
// old one it mapped.
//
// Thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace spmd {

// Smaller buffers are never shared: their payloads go through the rings (exchange.h's
// kByReferenceMin).
inline constexpr size_t kSharedBufferMin = size_t{256} << 10;

// A buffer of at least `bytes` (rounded up to whole pages) in a memfd of its own, or null when
// none can be had: memfd_create or mmap refused (a seccomp profile, memory), or this process
// already holds its budget of shared buffers, each of which keeps a descriptor open — a quarter
// of RLIMIT_NOFILE's soft limit, at most kMaxSharedBuffers.
void* allocate_shared_buffer(size_t bytes);
inline constexpr size_t kMaxSharedBuffers = 16384;

// Frees a buffer allocate_shared_buffer() returned; false, doing nothing, for any other pointer.
bool free_shared_buffer(void* p) noexcept;

// Where [data, data + n) lies in one shared buffer: the buffer's id, this process's descriptor for
// it, its size and the offset of `data` in it; nullopt when no shared buffer holds the whole
// range.
struct SharedSpan {
  uint64_t id = 0;
  int fd = -1;
  uint64_t size = 0;
  uint64_t offset = 0;
};
std::optional<SharedSpan> find_shared(const void* data, size_t n);

// The memfd name of buffer `id`, which a peer checks after taking the descriptor.
std::string shared_buffer_name(uint64_t id);

// This process's probe, for peers to test that they can take and map its buffers
// (group_setup.cc): a one-page shared buffer holding `word`, made on first use. fd is -1 where no
// shared buffer can be made here.
struct SharedProbe {
  uint64_t id = 0;
  int fd = -1;
  uint64_t word = 0;
};
const SharedProbe& shared_probe();

// Shared buffers held now and their bytes, and buffers asked for that could not be shared.
struct SharedBufferCounts {
  uint64_t buffers = 0;
  uint64_t bytes = 0;
  uint64_t refused = 0;
};
SharedBufferCounts shared_buffer_counts();

}  // namespace spmd
