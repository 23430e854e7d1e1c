// The public face of comm memory (spmd/comm_memory.h) over the shared buffers.
#include "spmd/comm_memory.h"

#include "comm/peer_mappings.h"
#include "comm/shared_buffers.h"

namespace spmd {

void* allocate_comm_memory(size_t bytes) {
  if (bytes >= kSharedBufferMin) {
    if (void* p = allocate_shared_buffer(bytes)) return p;
  }
  return ::operator new(bytes);
}

void free_comm_memory(void* p, size_t bytes) noexcept {
  if (p == nullptr) return;
  if (bytes >= kSharedBufferMin && free_shared_buffer(p)) return;
  ::operator delete(p);
}

bool is_shared_comm_memory(const void* p, size_t bytes) {
  return find_shared(p, bytes).has_value();
}

CommMemoryStats comm_memory_stats() {
  const SharedBufferCounts held = shared_buffer_counts();
  const PeerMappingCounts peers = peer_mapping_counts();
  return {held.buffers,           held.bytes,         held.refused, peers.payloads, peers.bytes,
          peers.written_payloads, peers.written_bytes};
}

}  // namespace spmd
