#include "comm/peer_mappings.h"

#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstring>

#include "comm/shared_buffers.h"
#include "spmd/error.h"

namespace spmd {
namespace {

std::atomic<uint64_t> g_payloads{0};
std::atomic<uint64_t> g_bytes{0};
std::atomic<uint64_t> g_mappings{0};
std::atomic<uint64_t> g_written_payloads{0};
std::atomic<uint64_t> g_written_bytes{0};

int open_pidfd(int64_t pid) { return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)); }

// The peer's descriptor `fd`, as one of this process's, after checking that it is the memfd of
// buffer `id` (its name); -1 with errno set otherwise.
int take_buffer(int pidfd, int fd, uint64_t id) {
  const int mine = static_cast<int>(::syscall(SYS_pidfd_getfd, pidfd, fd, 0));
  if (mine < 0) return -1;
  char link[64];
  const std::string path = fmt::format("/proc/self/fd/{}", mine);
  const ssize_t k = ::readlink(path.c_str(), link, sizeof(link) - 1);
  const std::string want = "/memfd:" + shared_buffer_name(id) + " ";
  if (k < static_cast<ssize_t>(want.size()) || std::memcmp(link, want.data(), want.size()) != 0) {
    ::close(mine);
    errno = EBADF;
    return -1;
  }
  return mine;
}

}  // namespace

PeerMappings::PeerMappings(int64_t pid, std::string peer) : peer_(std::move(peer)) {
  pidfd_ = open_pidfd(pid);
  if (pidfd_ < 0) {
    throw Error(fmt::format("cannot open {} (pid {}) to map its buffers: {}", peer_, pid,
                            std::strerror(errno)));
  }
}

PeerMappings::~PeerMappings() {
  for (auto& [id, m] : by_id_) ::munmap(m.base, m.size);
  ::close(pidfd_);
}

const std::byte* PeerMappings::locate(const ReferenceBody& body, size_t offset, size_t n) {
  std::byte* p = at(body, offset, n);
  if (offset == 0) g_payloads.fetch_add(1, std::memory_order_relaxed);
  g_bytes.fetch_add(n, std::memory_order_relaxed);
  return p;
}

std::byte* PeerMappings::reach(const ReferenceBody& body, size_t offset, size_t n,
                               PeerAccess access) {
  std::byte* p = at(body, offset, n);
  const bool write = access == PeerAccess::kWrite;
  (write ? g_written_payloads : g_payloads).fetch_add(1, std::memory_order_relaxed);
  (write ? g_written_bytes : g_bytes).fetch_add(n, std::memory_order_relaxed);
  return p;
}

std::byte* PeerMappings::at(const ReferenceBody& body, size_t offset, size_t n) {
  const Mapping& m = map(body);
  if (body.buffer_offset > m.size || offset > m.size - body.buffer_offset ||
      n > m.size - body.buffer_offset - offset) {
    throw Error(fmt::format(
        "{} sent a by-reference payload at offset {} of its buffer {}, past the buffer's {} "
        "bytes",
        peer_, body.buffer_offset + offset + n, body.buffer, m.size));
  }
  return m.base + body.buffer_offset + offset;
}

const PeerMappings::Mapping& PeerMappings::map(const ReferenceBody& body) {
  const auto it = by_id_.find(body.buffer);
  if (it != by_id_.end()) {
    it->second.last_use = ++uses_;
    return it->second;
  }
  if (body.buffer == 0 || body.buffer_fd < 0) {
    throw Error(fmt::format("{} sent a by-reference payload naming buffer {} (descriptor {})",
                            peer_, body.buffer, body.buffer_fd));
  }
  const int fd = take_buffer(pidfd_, body.buffer_fd, body.buffer);
  struct stat st {};
  if (fd < 0 || ::fstat(fd, &st) != 0 || st.st_size <= 0) {
    const int err = errno;
    if (fd >= 0) ::close(fd);
    throw Error(fmt::format("cannot take buffer {} from {} (its descriptor {}): {}", body.buffer,
                            peer_, body.buffer_fd, std::strerror(err)));
  }
  const auto size = static_cast<size_t>(st.st_size);
  void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  const int err = errno;
  ::close(fd);
  if (p == MAP_FAILED) {
    throw Error(fmt::format("cannot map buffer {} of {} ({} bytes): {}", body.buffer, peer_, size,
                            std::strerror(err)));
  }
  if (by_id_.size() >= kMaxMappings) evict_one();
  g_mappings.fetch_add(1, std::memory_order_relaxed);
  return by_id_[body.buffer] = Mapping{static_cast<std::byte*>(p), size, ++uses_};
}

void PeerMappings::evict_one() {
  auto oldest = by_id_.begin();
  for (auto it = by_id_.begin(); it != by_id_.end(); ++it) {
    if (it->second.last_use < oldest->second.last_use) oldest = it;
  }
  ::munmap(oldest->second.base, oldest->second.size);
  by_id_.erase(oldest);
}

bool PeerMappings::can_map(int64_t pid, int fd, uint64_t id, uint64_t word) {
  const int pidfd = open_pidfd(pid);
  if (pidfd < 0) return false;
  const int mine = take_buffer(pidfd, fd, id);
  ::close(pidfd);
  if (mine < 0) return false;
  uint64_t got = 0;
  const bool ok = ::pread(mine, &got, sizeof(got), 0) == static_cast<ssize_t>(sizeof(got));
  ::close(mine);
  return ok && got == word;
}

PeerMappingCounts peer_mapping_counts() {
  return {g_payloads.load(std::memory_order_relaxed), g_bytes.load(std::memory_order_relaxed),
          g_mappings.load(std::memory_order_relaxed),
          g_written_payloads.load(std::memory_order_relaxed),
          g_written_bytes.load(std::memory_order_relaxed)};
}

}  // namespace spmd
