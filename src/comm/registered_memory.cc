#include "comm/registered_memory.h"

#include <map>
#include <mutex>

namespace spmd {
namespace {

struct Buffer {
  size_t size = 0;
  void* handle = nullptr;  // the registration, once made
};

struct PoolRegistry {
  std::mutex mu;
  std::map<uintptr_t, Buffer> buffers;  // by base address
  MemoryRegistrar* registrar = nullptr;
  RegistrationStats stats;
};

// Never destroyed: pool buffers are freed by other static destructors at exit.
PoolRegistry& pool_registry() {
  static auto* r = new PoolRegistry;
  return *r;
}

}  // namespace

void note_pool_buffer(void* base, size_t size) {
  PoolRegistry& r = pool_registry();
  std::lock_guard lock(r.mu);
  r.buffers[reinterpret_cast<uintptr_t>(base)] = Buffer{size, nullptr};
  r.stats.pool_buffers = r.buffers.size();
}

void forget_pool_buffer(void* base, size_t size) {
  PoolRegistry& r = pool_registry();
  std::lock_guard lock(r.mu);
  const auto it = r.buffers.find(reinterpret_cast<uintptr_t>(base));
  if (it == r.buffers.end()) return;
  if (it->second.handle != nullptr && r.registrar != nullptr) {
    r.registrar->deregister(it->second.handle);
    ++r.stats.deregistrations;
  }
  r.buffers.erase(it);
  r.stats.pool_buffers = r.buffers.size();
}

void set_memory_registrar(MemoryRegistrar* registrar) {
  PoolRegistry& r = pool_registry();
  std::lock_guard lock(r.mu);
  if (r.registrar == nullptr) r.registrar = registrar;
}

void* registration_for(const void* data, size_t n) {
  PoolRegistry& r = pool_registry();
  std::lock_guard lock(r.mu);
  if (r.registrar == nullptr) return nullptr;
  const auto at = reinterpret_cast<uintptr_t>(data);
  auto it = r.buffers.upper_bound(at);
  if (it == r.buffers.begin()) return nullptr;
  --it;
  Buffer& b = it->second;
  if (at + n > it->first + b.size) return nullptr;
  if (b.handle != nullptr) {
    ++r.stats.lookups_hit;
    return b.handle;
  }
  try {
    // NOLINTNEXTLINE(performance-no-int-to-ptr): the pool buffer's own base
    b.handle = r.registrar->register_range(reinterpret_cast<void*>(it->first), b.size);
    ++r.stats.registrations;
  } catch (...) {
    return nullptr;
  }
  return b.handle;
}

RegistrationStats registration_stats() {
  PoolRegistry& r = pool_registry();
  std::lock_guard lock(r.mu);
  return r.stats;
}

}  // namespace spmd
