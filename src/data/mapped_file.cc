// mmap of a whole file.
#include "data/mapped_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "spmd/error.h"

namespace spmd::data {
namespace {

constexpr size_t kPopulateBelow = size_t{4} << 30;

}  // namespace

MappedFile::MappedFile(std::string path) : path_(std::move(path)) {
  const int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    throw Error(fmt::format("data: cannot open {}: {}", path_, std::strerror(errno)));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int e = errno;
    ::close(fd);
    throw Error(fmt::format("data: cannot stat {}: {}", path_, std::strerror(e)));
  }
  size_ = static_cast<size_t>(st.st_size);
  if (size_ > 0) {
    void* p = ::mmap(nullptr, size_, PROT_READ, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
      const int e = errno;
      ::close(fd);
      throw Error(fmt::format("data: cannot map {}: {}", path_, std::strerror(e)));
    }
    data_ = static_cast<const std::byte*>(p);
    // A shuffled epoch touches every page in random order; faulting them in one call up front is
    // several times cheaper than one fault per page later. Only for files that fit comfortably in
    // memory: a larger dataset is paged in as it is read. Advice, so a refusal is ignored.
#ifdef MADV_POPULATE_READ
    if (size_ <= kPopulateBelow) ::madvise(p, size_, MADV_POPULATE_READ);
#endif
  }
  ::close(fd);
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) ::munmap(const_cast<std::byte*>(data_), size_);  // NOLINT: our mapping
}

}  // namespace spmd::data
