// Opening the files of a checkpoint without trusting them: regular files only, never a FIFO (whose
// open() would block forever), a device or a directory, and never a symbolic link inside a
// checkpoint (one could lead out of it). Every error names the file and what it is instead.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace spmd::checkpoint {

// An open regular file, closed on destruction.
class RegularFile {
 public:
  // Opens `path` for reading; a symbolic link as its last component is refused (links above it
  // are the caller's own path). Throws spmd::Error naming the file when it is absent, not a
  // regular file, or cannot be opened.
  static RegularFile open(const std::string& path);
  // Opens the file `parts` names under the directory `root` (root/parts[0]/…/parts.back()),
  // refusing a symbolic link at every level below `root`. Throws as open().
  static RegularFile open_beneath(const std::string& root, const std::vector<std::string>& parts);

  RegularFile(RegularFile&& other) noexcept;
  RegularFile& operator=(RegularFile&&) = delete;
  RegularFile(const RegularFile&) = delete;
  ~RegularFile();

  int fd() const { return fd_; }
  const std::string& path() const { return path_; }
  // Its size when opened.
  uint64_t size() const { return size_; }

 private:
  RegularFile(int fd, std::string path);
  int fd_;
  std::string path_;
  uint64_t size_ = 0;
};

}  // namespace spmd::checkpoint
