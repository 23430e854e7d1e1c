// Memory registration cached per buffer pool. Host buffers the array layer's pool keeps for reuse
// (array/buffer_pool.cc) are announced here when made and withdrawn when the pool gives them
// back to the system; a transport that registers memory with the network (UCX, for zero-copy
// rendezvous) asks for a buffer's registration when it sends from or receives into it, and gets
// the one made the first time, covering the whole pool buffer. Memory outside the pool's buffers
// has none here (UCX then registers per transfer, through its own cache).
//
// Thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>

namespace spmd {

// The pool's side.
void note_pool_buffer(void* base, size_t size);
void forget_pool_buffer(void* base, size_t size);

// Made by the transport that registers (UCX): register_range() returns a handle (never null) or
// throws; deregister() releases it.
class MemoryRegistrar {
 public:
  virtual ~MemoryRegistrar() = default;
  virtual void* register_range(void* base, size_t size) = 0;
  virtual void deregister(void* handle) noexcept = 0;
};

// Installs the registrar (once per process; later calls with another one are ignored).
void set_memory_registrar(MemoryRegistrar* registrar);

// The registration of the pool buffer holding [data, data + n), made now if it is the first
// request; null when no pool buffer holds the range, no registrar is set, or registering failed
// (the transfer then goes without one).
void* registration_for(const void* data, size_t n);

struct RegistrationStats {
  uint64_t pool_buffers = 0;     // announced and not withdrawn
  uint64_t registrations = 0;    // made, ever
  uint64_t deregistrations = 0;  // released, ever
  uint64_t lookups_hit = 0;      // registration_for() calls answered from the cache
};
RegistrationStats registration_stats();

}  // namespace spmd
