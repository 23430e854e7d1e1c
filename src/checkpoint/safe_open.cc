// open(2) and openat(2) with O_NOFOLLOW and O_NONBLOCK, then fstat(2) to see what was opened.
#include "checkpoint/safe_open.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "spmd/error.h"

namespace spmd::checkpoint {
namespace {

// O_NONBLOCK: opening a FIFO for reading returns at once instead of waiting for a writer; on a
// regular file it changes nothing. O_NOFOLLOW: a link as the last component fails with ELOOP.
constexpr int kFileFlags = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC;
constexpr int kDirFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;

const char* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "not a regular file";
}

[[noreturn]] void open_failed(const std::string& path, int err) {
  if (err == ELOOP) {
    throw Error(fmt::format(
        "checkpoint: {} is a symbolic link; a checkpoint holds regular files and directories only",
        path));
  }
  throw Error(fmt::format("checkpoint: cannot open {}: {}", path, std::strerror(err)));
}

// Closes a directory descriptor on every path out.
struct DirFd {
  int fd;
  ~DirFd() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

RegularFile::RegularFile(int fd, std::string path) : fd_(fd), path_(std::move(path)) {
  struct stat st {};
  if (::fstat(fd_, &st) != 0) {
    const int err = errno;
    ::close(fd_);
    fd_ = -1;
    open_failed(path_, err);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd_);
    fd_ = -1;
    throw Error(
        fmt::format("checkpoint: {} is {}, not a regular file", path_, kind_of(st.st_mode)));
  }
  size_ = static_cast<uint64_t>(st.st_size);
}

RegularFile::RegularFile(RegularFile&& other) noexcept
    : fd_(other.fd_), path_(std::move(other.path_)), size_(other.size_) {
  other.fd_ = -1;
}

RegularFile::~RegularFile() {
  if (fd_ >= 0) ::close(fd_);
}

RegularFile RegularFile::open(const std::string& path) {
  const int fd = ::open(path.c_str(), kFileFlags);
  if (fd < 0) open_failed(path, errno);
  return RegularFile(fd, path);
}

RegularFile RegularFile::open_beneath(const std::string& root,
                                      const std::vector<std::string>& parts) {
  if (parts.empty()) throw InvalidArgument("checkpoint: open_beneath needs a file name");
  std::filesystem::path shown(root);
  DirFd dir{::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)};
  if (dir.fd < 0) open_failed(root, errno);
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    shown /= parts[i];
    DirFd next{::openat(dir.fd, parts[i].c_str(), kDirFlags)};
    if (next.fd < 0) {
      // O_DIRECTORY with O_NOFOLLOW says ENOTDIR for a link: tell a link apart.
      const int err = errno;
      struct stat st {};
      const bool link =
          ::fstatat(dir.fd, parts[i].c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode);
      open_failed(shown.string(), link ? ELOOP : err);
    }
    std::swap(dir.fd, next.fd);
  }
  shown /= parts.back();
  const int fd = ::openat(dir.fd, parts.back().c_str(), kFileFlags);
  if (fd < 0) open_failed(shown.string(), errno);
  return RegularFile(fd, shown.string());
}

}  // namespace spmd::checkpoint
