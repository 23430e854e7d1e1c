// Host buffers for array bytes (host_array.h, detail::allocate_buffer): large ones are kept after
// they are freed and handed out again for the same size, as XLA's and PyTorch's caching
// allocators do. A training step allocates the same sizes every step; through malloc, those
// buffers went back to the kernel (munmap, heap trimming) and came back as fresh pages, one page
// fault each, costing a jit train step on this machine up to 2.7× its time on every other step.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <map>
#include <mutex>
#include <new>
#include <string>
#include <vector>

#include "comm/registered_memory.h"
#include "spmd/host_array.h"

namespace spmd::detail {
namespace {

// Smaller buffers are malloc's business: it keeps them well.
constexpr size_t kPoolFrom = size_t{64} << 10;
// Buffers at least this large get huge-page alignment and advice.
constexpr size_t kHugeFrom = size_t{4} << 20;
constexpr size_t kHugePage = size_t{2} << 20;
constexpr size_t kPage = 4096;

size_t rounded(size_t bytes) {
  const size_t unit = bytes >= kHugeFrom ? kHugePage : kPage;
  return (bytes + unit - 1) & ~(unit - 1);
}

// How many freed bytes may wait for reuse: SPMD_HOST_BUFFER_CACHE (bytes; 0 turns the cache
// off), else an eighth of physical memory, at most 4 GiB.
size_t default_capacity() {
  if (const char* env = std::getenv("SPMD_HOST_BUFFER_CACHE")) {
    char* end = nullptr;
    const unsigned long long v = std::strtoull(env, &end, 10);
    if (end != env && *end == '\0') return static_cast<size_t>(v);
  }
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const size_t physical = pages > 0 ? static_cast<size_t>(pages) * kPage : size_t{8} << 30;
  return std::min(physical / 8, size_t{4} << 30);
}

class Pool {
 public:
  void* take(size_t size) {
    std::lock_guard lock(mu_);
    auto it = free_.find(size);
    if (it == free_.end() || it->second.empty()) return nullptr;
    void* p = it->second.back();
    it->second.pop_back();
    cached_ -= size;
    return p;
  }
  // Keeps `p` (of `size`) for reuse; false when the cache is full (the caller frees it).
  bool keep(void* p, size_t size) {
    std::lock_guard lock(mu_);
    if (cached_ + size > capacity_) return false;
    free_[size].push_back(p);
    cached_ += size;
    return true;
  }

 private:
  std::mutex mu_;
  std::map<size_t, std::vector<void*>> free_;
  size_t cached_ = 0;
  const size_t capacity_ = default_capacity();
};

// Never destroyed: buffers may be freed by other static destructors at exit.
Pool& pool() {
  static Pool* p = new Pool;
  return *p;
}

// A pool buffer is announced to the collectives engine from when it is made until it goes back
// to the system, so that a transport registering memory with the network (UCX) registers it
// once (comm/registered_memory.h).
void* fresh(size_t size) {
  void* p = nullptr;
  if (size < kHugeFrom) {
    p = ::operator new(size);
  } else {
    p = std::aligned_alloc(kHugePage, size);
    if (p == nullptr) throw std::bad_alloc();
    ::madvise(p, size, MADV_HUGEPAGE);
  }
  note_pool_buffer(p, size);
  return p;
}

void release(void* p, size_t size) noexcept {
  forget_pool_buffer(p, size);
  if (size < kHugeFrom) {
    ::operator delete(p);
  } else {
    std::free(p);
  }
}

}  // namespace

void* allocate_buffer(size_t bytes) {
  if (bytes < kPoolFrom) return ::operator new(bytes);
  const size_t size = rounded(bytes);
  if (void* p = pool().take(size)) return p;
  return fresh(size);
}

void free_buffer(void* p, size_t bytes) noexcept {
  if (p == nullptr) return;
  if (bytes < kPoolFrom) {
    ::operator delete(p);
    return;
  }
  const size_t size = rounded(bytes);
  if (!pool().keep(p, size)) release(p, size);
}

}  // namespace spmd::detail
