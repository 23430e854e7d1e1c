#include "comm/shm_segment.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

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

}  // namespace

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
    return ShmSegment(name, map(f.fd, bytes, name), bytes, true);
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
  if (owner_) ::shm_unlink(name_.c_str());
  owner_ = false;
}

void ShmSegment::reset() {
  unlink();
  if (data_ != nullptr) ::munmap(data_, size_);
  data_ = nullptr;
  size_ = 0;
}

}  // namespace spmd
