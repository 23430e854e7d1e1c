#include "comm/shared_buffers.h"

#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <map>
#include <mutex>
#include <random>

namespace spmd {
namespace {

constexpr size_t kPage = 4096;

struct Buffer {
  size_t size = 0;
  uint64_t id = 0;
  int fd = -1;
};

size_t budget() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) {
    return kMaxSharedBuffers;
  }
  return std::min<size_t>(limit.rlim_cur / 4, kMaxSharedBuffers);
}

struct Registry {
  std::mutex mu;
  std::map<uintptr_t, Buffer> buffers;  // by base address
  uint64_t next_id = 1;
  uint64_t bytes = 0;
  uint64_t refused = 0;
};

// Never destroyed: buffers may be freed by other static destructors at exit.
Registry& registry() {
  static auto* r = new Registry;
  return *r;
}

// A fresh memfd of `size` bytes mapped shared, or {null, -1}.
std::pair<void*, int> make_mapping(uint64_t id, size_t size) {
  const int fd = ::memfd_create(shared_buffer_name(id).c_str(), MFD_CLOEXEC);
  if (fd < 0) return {nullptr, -1};
  if (::ftruncate(fd, static_cast<off_t>(size)) != 0) {
    ::close(fd);
    return {nullptr, -1};
  }
  void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    ::close(fd);
    return {nullptr, -1};
  }
  return {p, fd};
}

}  // namespace

std::string shared_buffer_name(uint64_t id) { return fmt::format("spmd-comm-{}", id); }

void* allocate_shared_buffer(size_t bytes) {
  const size_t size = (std::max<size_t>(bytes, 1) + kPage - 1) & ~(kPage - 1);
  Registry& r = registry();
  uint64_t id = 0;
  {
    std::lock_guard lock(r.mu);
    // Read each time: the limit may change (setrlimit), and a large buffer is rare enough.
    if (r.buffers.size() >= budget()) {
      ++r.refused;
      return nullptr;
    }
    id = r.next_id++;
  }
  const auto [p, fd] = make_mapping(id, size);
  std::lock_guard lock(r.mu);
  if (p == nullptr) {
    ++r.refused;
    return nullptr;
  }
  r.buffers[reinterpret_cast<uintptr_t>(p)] = Buffer{size, id, fd};
  r.bytes += size;
  return p;
}

bool free_shared_buffer(void* p) noexcept {
  Registry& r = registry();
  Buffer b;
  {
    std::lock_guard lock(r.mu);
    const auto it = r.buffers.find(reinterpret_cast<uintptr_t>(p));
    if (it == r.buffers.end()) return false;
    b = it->second;
    r.buffers.erase(it);
    r.bytes -= b.size;
  }
  // Truncated first: a peer's mapping of the file then holds no pages (see the header).
  (void)::ftruncate(b.fd, 0);
  ::munmap(p, b.size);
  ::close(b.fd);
  return true;
}

std::optional<SharedSpan> find_shared(const void* data, size_t n) {
  Registry& r = registry();
  const auto at = reinterpret_cast<uintptr_t>(data);
  std::lock_guard lock(r.mu);
  auto it = r.buffers.upper_bound(at);
  if (it == r.buffers.begin()) return std::nullopt;
  --it;
  const Buffer& b = it->second;
  if (at - it->first > b.size || n > b.size - (at - it->first)) return std::nullopt;
  return SharedSpan{b.id, b.fd, b.size, at - it->first};
}

const SharedProbe& shared_probe() {
  // Outside the registry: never freed, never a payload.
  static const SharedProbe probe = [] {
    SharedProbe p;
    {
      Registry& r = registry();
      std::lock_guard lock(r.mu);
      p.id = r.next_id++;
    }
    const auto [page, fd] = make_mapping(p.id, kPage);
    if (page == nullptr) return SharedProbe{};
    p.fd = fd;
    p.word = std::random_device{}() * 0x100000001ull + std::random_device{}();
    *static_cast<uint64_t*>(page) = p.word;
    return p;
  }();
  return probe;
}

SharedBufferCounts shared_buffer_counts() {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  return {r.buffers.size(), r.bytes, r.refused};
}

}  // namespace spmd
