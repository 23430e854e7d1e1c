// The save lock: fcntl(F_OFD_SETLK) on a lock file that names its holder.
#include "checkpoint/save_lock.h"

#include <fcntl.h>
#include <fmt/chrono.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "checkpoint/json_text.h"
#include "spmd/error.h"

namespace spmd::checkpoint {
namespace {

using json = nlohmann::json;

// A holder's record is a few hundred bytes; more is not one.
constexpr size_t kMaxRecord = 4096;
// A lock file unlinked between our open and our lock is opened again at most this often.
constexpr int kAttempts = 16;

std::string read_record(int fd) {
  std::string text(kMaxRecord, '\0');
  const ssize_t n = ::pread(fd, text.data(), text.size(), 0);
  text.resize(n > 0 ? static_cast<size_t>(n) : 0);
  return text;
}

// "host h1, pid 4242, since 2026-11-25 10:03:01 UTC, save 0123abcd…", from a holder's record.
std::string describe_holder(const std::string& record) {
  const json j = json::parse(record, nullptr, false);
  if (!j.is_object()) return "a save that is just starting (its record is not written yet)";
  const auto since = std::chrono::system_clock::time_point(
      std::chrono::seconds(j.value("since_unix", int64_t{0})));
  return fmt::format("host {}, pid {}, since {:%Y-%m-%d %H:%M:%S} UTC, save {}",
                     j.value("host", std::string("?")), j.value("pid", int64_t{0}),
                     fmt::gmtime(std::chrono::system_clock::to_time_t(since)),
                     j.value("spmd_save", std::string("?")));
}

[[noreturn]] void io_failed(const char* what, const std::string& path) {
  throw Error(
      fmt::format("checkpoint: cannot {} the save lock {}: {}", what, path, std::strerror(errno)));
}

// True when `fd` is still the file at `path` (a holder that ends unlinks the file before it
// releases the lock, so a lock taken on an unlinked file protects nothing).
bool still_linked(int fd, const std::string& path) {
  struct stat mine {};
  struct stat there {};
  if (::fstat(fd, &mine) != 0 || ::stat(path.c_str(), &there) != 0) return false;
  return mine.st_dev == there.st_dev && mine.st_ino == there.st_ino;
}

// Holds the lock: writes this process's record over whatever a dead holder left, saying so.
void claim(int fd, const std::string& path, const SaveTarget& target, const std::string& id) {
  const std::string previous = read_record(fd);
  if (!previous.empty()) {
    spdlog::warn(
        "checkpoint: took over the save lock of {} from {}, which ended without releasing it "
        "(the process died); its unfinished files are reclaimed by this save",
        target.dir.string(), describe_holder(previous));
  }
  const std::string record = json_text(saver_record(id));
  if (::ftruncate(fd, 0) != 0) io_failed("truncate", path);
  if (::pwrite(fd, record.data(), record.size(), 0) != static_cast<ssize_t>(record.size())) {
    io_failed("write", path);
  }
}

}  // namespace

std::string SaveLock::file_of(const SaveTarget& target) {
  return (target.parent / (target.base + ".spmd-lock")).string();
}

std::optional<SaveLock> SaveLock::try_acquire(const SaveTarget& target, const std::string& id) {
  const std::string path = file_of(target);
  std::error_code ec;
  std::filesystem::create_directories(target.parent, ec);
  if (ec) {
    throw Error(
        fmt::format("checkpoint: cannot create {}: {}", target.parent.string(), ec.message()));
  }
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) io_failed("open", path);
    struct flock lock {};
    lock.l_type = F_WRLCK;
    lock.l_whence = SEEK_SET;
    if (::fcntl(fd, F_OFD_SETLK, &lock) != 0) {
      const int err = errno;
      ::close(fd);
      if (err == EAGAIN || err == EACCES) return std::nullopt;
      errno = err;
      io_failed("lock", path);
    }
    if (!still_linked(fd, path)) {
      ::close(fd);
      continue;
    }
    try {
      claim(fd, path, target, id);
    } catch (...) {
      ::close(fd);
      throw;
    }
    return SaveLock(fd, path);
  }
  throw Error(fmt::format("checkpoint: the save lock {} kept changing under this process", path));
}

SaveLock SaveLock::acquire(const SaveTarget& target, const std::string& id) {
  auto lock = try_acquire(target, id);
  if (lock) return std::move(*lock);
  const std::string path = file_of(target);
  std::string holder = "another save";
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd >= 0) {
    holder = describe_holder(read_record(fd));
    ::close(fd);
  }
  throw AlreadyExists(fmt::format(
      "checkpoint: another save of {} is in progress ({}; it holds {}); wait for it to finish, or "
      "save elsewhere",
      target.dir.string(), holder, path));
}

SaveLock::SaveLock(SaveLock&& other) noexcept : fd_(other.fd_), path_(std::move(other.path_)) {
  other.fd_ = -1;
}

SaveLock::~SaveLock() {
  if (fd_ < 0) return;
  ::unlink(path_.c_str());
  ::close(fd_);
}

}  // namespace spmd::checkpoint
