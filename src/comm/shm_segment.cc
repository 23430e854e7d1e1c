#include "comm/shm_segment.h"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <utility>
#include <vector>

#include "runtime/fast_exit.h"
#include "spmd/error.h"

namespace spmd {
namespace {

struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

std::byte* map(int fd, size_t bytes, const std::string& name) {
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    throw Error(fmt::format("cannot map shared memory {} ({} bytes): {}", name, bytes,
                            std::strerror(errno)));
  }
  return static_cast<std::byte*>(p);
}

// The names this process created and has not unlinked, for unlink_all_named().
std::mutex g_named_mu;
std::vector<std::string>& named() {
  static auto* names = new std::vector<std::string>;  // outlives static destructors
  return *names;
}

void note_named(const std::string& name) {
  add_fast_exit_cleanup(&ShmSegment::unlink_all_named);
  std::lock_guard<std::mutex> lock(g_named_mu);
  named().push_back(name);
}

void forget_named(const std::string& name) {
  std::lock_guard<std::mutex> lock(g_named_mu);
  std::vector<std::string>& names = named();
  names.erase(std::remove(names.begin(), names.end(), name), names.end());
}

}  // namespace

void ShmSegment::unlink_all_named() noexcept {
  std::unique_lock<std::mutex> lock(g_named_mu, std::try_to_lock);
  if (!lock.owns_lock()) return;
  for (const std::string& name : named()) ::shm_unlink(name.c_str());
  named().clear();
}

int ShmSegment::unlink_left_by(long pid) noexcept {
  DIR* dir = ::opendir("/dev/shm");
  if (dir == nullptr) return 0;
  char prefix[32];
  const int n = std::snprintf(prefix, sizeof(prefix), "spmd-%ld-", pid);
  int removed = 0;
  while (const dirent* e = ::readdir(dir)) {
    if (std::strncmp(e->d_name, prefix, static_cast<size_t>(n)) != 0) continue;
    const std::string name = std::string("/") + e->d_name;
    if (::shm_unlink(name.c_str()) == 0) ++removed;
  }
  ::closedir(dir);
  return removed;
}

ShmSegment ShmSegment::create(const std::string& name, size_t bytes) {
  Fd f{::shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600)};
  if (f.fd < 0 && errno == EEXIST) {  // a dead process's, with this process's pid
    ::shm_unlink(name.c_str());
    f.fd = ::shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
  }
  if (f.fd < 0) {
    throw Error(
        fmt::format("cannot create shared memory {}: {} (is /dev/shm mounted and writable?)", name,
                    std::strerror(errno)));
  }
  // posix_fallocate reserves the pages now, so a full /dev/shm is an error here rather than a
  // SIGBUS in the middle of a collective.
  const int rc = ::posix_fallocate(f.fd, 0, static_cast<off_t>(bytes));
  if (rc != 0) {
    ::shm_unlink(name.c_str());
    throw Error(fmt::format(
        "cannot reserve {} bytes of shared memory for {}: {} (free space in /dev/shm, or lower "
        "SPMD_SHM_RING_BYTES)",
        bytes, name, std::strerror(rc)));
  }
  try {
    ShmSegment segment(name, map(f.fd, bytes, name), bytes, true);
    note_named(name);
    return segment;
  } catch (...) {
    ::shm_unlink(name.c_str());
    throw;
  }
}

ShmSegment ShmSegment::open(const std::string& name, size_t bytes) {
  Fd f{::shm_open(name.c_str(), O_RDWR, 0)};
  if (f.fd < 0) {
    throw Error(fmt::format("cannot open the shared memory {} a peer created: {}", name,
                            std::strerror(errno)));
  }
  struct stat st {};
  if (::fstat(f.fd, &st) != 0 || static_cast<size_t>(st.st_size) != bytes) {
    throw Error(fmt::format("shared memory {} is {} bytes where {} were expected", name,
                            static_cast<long long>(st.st_size), bytes));
  }
  return ShmSegment(name, map(f.fd, bytes, name), bytes, false);
}

ShmSegment::ShmSegment(std::string name, std::byte* data, size_t size, bool owner)
    : name_(std::move(name)), data_(data), size_(size), owner_(owner) {}

ShmSegment::ShmSegment(ShmSegment&& other) noexcept
    : name_(std::move(other.name_)),
      data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      owner_(std::exchange(other.owner_, false)) {}

ShmSegment& ShmSegment::operator=(ShmSegment&& other) noexcept {
  if (this != &other) {
    reset();
    name_ = std::move(other.name_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    owner_ = std::exchange(other.owner_, false);
  }
  return *this;
}

ShmSegment::~ShmSegment() { reset(); }

void ShmSegment::unlink() {
  if (owner_) {
    ::shm_unlink(name_.c_str());
    forget_named(name_);
  }
  owner_ = false;
}

void ShmSegment::reset() {
  unlink();
  if (data_ != nullptr) ::munmap(data_, size_);
  data_ = nullptr;
  size_ = 0;
}

}  // namespace spmd
