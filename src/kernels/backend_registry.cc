// Which backend serves a platform or a memory (backend.h): the CPU's, a test's override of it,
// or one registered from beside libspmd; and the memory methods' host-memory defaults.
#include <fmt/format.h>

#include <atomic>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "kernels/backend.h"
#include "spmd/error.h"

namespace spmd::kernels {
namespace {

// The backend BackendOverride installed for the CPU's platform, or null.
std::atomic<const Backend*> cpu_override{nullptr};

// The backends register_backend added, in the order they came.
struct Registered {
  std::mutex mutex;
  std::vector<const Backend*> backends;
};

Registered& registered() {
  static Registered r;
  return r;
}

std::string platforms_here() {
  std::string names = "cpu";
  Registered& r = registered();
  const std::lock_guard lock(r.mutex);
  for (const Backend* b : r.backends) names += fmt::format(", {}", b->platform());
  return names;
}

}  // namespace

std::shared_ptr<std::byte> Backend::allocate(MemorySpace memory, size_t /*bytes*/) const {
  throw InvalidArgument(fmt::format("the '{}' kernel backend has no device memory to give ({})",
                                    platform(), memory.to_string()));
}

void Backend::copy(const std::byte* from, MemorySpace from_memory, std::byte* to,
                   MemorySpace to_memory, size_t bytes) const {
  if (from_memory != MemorySpace::host() || to_memory != MemorySpace::host()) {
    throw InvalidArgument(
        fmt::format("the '{}' kernel backend copies in host memory only, not {} "
                    "to {}",
                    platform(), from_memory.to_string(), to_memory.to_string()));
  }
  if (bytes > 0) std::memcpy(to, from, bytes);
}

const Backend& backend_for(std::string_view platform) {
  if (platform == "cpu") {
    const Backend* installed = cpu_override.load(std::memory_order_acquire);
    return installed != nullptr ? *installed : cpu_backend();
  }
  {
    Registered& r = registered();
    const std::lock_guard lock(r.mutex);
    for (const Backend* b : r.backends) {
      if (b->platform() == platform) return *b;
    }
  }
  throw InvalidArgument(
      fmt::format("no kernel backend for devices of platform '{}' in this build (it has: {})",
                  platform, platforms_here()));
}

const Backend& backend_of(MemorySpace memory) {
  const Backend* installed = cpu_override.load(std::memory_order_acquire);
  if (memory.kind == MemorySpace::Kind::kHost) {
    return installed != nullptr ? *installed : cpu_backend();
  }
  if (installed != nullptr && installed->memory(memory.local_hardware_id) == memory) {
    return *installed;
  }
  {
    Registered& r = registered();
    const std::lock_guard lock(r.mutex);
    for (const Backend* b : r.backends) {
      if (b->memory(memory.local_hardware_id) == memory) return *b;
    }
  }
  throw InvalidArgument(fmt::format(
      "no kernel backend for {} memory in this build (it has: {}, and the CPU's computes in host "
      "memory)",
      memory.to_string(), platforms_here()));
}

void register_backend(const Backend& backend) {
  if (backend.platform() == "cpu") {
    throw InvalidArgument(
        "register_backend: the CPU's backend is built in (tests replace it "
        "with BackendOverride)");
  }
  Registered& r = registered();
  const std::lock_guard lock(r.mutex);
  for (const Backend* b : r.backends) {
    if (b->platform() == backend.platform()) {
      throw InvalidArgument(
          fmt::format("register_backend: platform '{}' already has a backend", backend.platform()));
    }
  }
  r.backends.push_back(&backend);
}

BackendOverride::BackendOverride(const Backend& backend) {
  if (backend.platform() != "cpu") {
    throw InvalidArgument(fmt::format(
        "BackendOverride: only the CPU's backend is overridden, and this one is for '{}'",
        backend.platform()));
  }
  previous_ = cpu_override.exchange(&backend, std::memory_order_acq_rel);
}

BackendOverride::~BackendOverride() { cpu_override.store(previous_, std::memory_order_release); }

}  // namespace spmd::kernels
