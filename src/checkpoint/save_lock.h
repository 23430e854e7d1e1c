// One save per path at a time: the lock a save of a target takes before it writes anything and
// holds until after COMMIT.
//
// The lock is an open-file-description lock (fcntl F_OFD_SETLK) on `<parent>/<base>.spmd-lock`,
// which holds the holder's host, pid, start time and save id. The kernel (or the NFS server's
// lock manager) releases it when the holder dies however it dies, so a dead holder never blocks
// a later save: the next one takes the lock over and logs a line naming the holder it replaced.
// A holder that ends normally removes the file. Two savers in one process conflict too.
#pragma once

#include <optional>
#include <string>

#include "checkpoint/save_target.h"

namespace spmd::checkpoint {

class SaveLock {
 public:
  // Takes the lock of `target` for save `save_id`, creating the target's parent directories
  // first (the lock file lives there). Throws AlreadyExists naming the holder
  // (host, pid, since when, its save id) when another save holds it, spmd::Error naming the lock
  // file when the file system refuses.
  static SaveLock acquire(const SaveTarget& target, const std::string& save_id);
  // The same, but nullopt instead of AlreadyExists when another save holds it.
  static std::optional<SaveLock> try_acquire(const SaveTarget& target, const std::string& save_id);

  SaveLock(SaveLock&& other) noexcept;
  SaveLock& operator=(SaveLock&&) = delete;
  SaveLock(const SaveLock&) = delete;
  // Removes the lock file, then releases the lock.
  ~SaveLock();

  // The lock file of `target`.
  static std::string file_of(const SaveTarget& target);

 private:
  SaveLock(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  int fd_;
  std::string path_;
};

}  // namespace spmd::checkpoint
