// A POSIX shared-memory segment mapped into this process: RAII over shm_open + mmap.
//
// The creator unlinks the name once every peer has mapped it, so a crashed job leaves nothing
// in /dev/shm for long; the mapping itself lives until the last process unmaps it.
#pragma once

#include <cstddef>
#include <string>

namespace spmd {

class ShmSegment {
 public:
  // Creates `name` ("/spmd-…") of `bytes` bytes, zero-filled, readable and writable by this user
  // only. `name` must hold this process's pid, so that no live process has it: a segment of that
  // name already there was left by a process killed before it could unlink it that had the same
  // pid (pids are reused), and is replaced. Throws spmd::Error naming the segment and what to do
  // (e.g. /dev/shm is full).
  static ShmSegment create(const std::string& name, size_t bytes);
  // Maps an existing segment; throws when it is absent or not `bytes` long.
  static ShmSegment open(const std::string& name, size_t bytes);

  ShmSegment() = default;
  ShmSegment(ShmSegment&& other) noexcept;
  ShmSegment& operator=(ShmSegment&& other) noexcept;
  ShmSegment(const ShmSegment&) = delete;
  ShmSegment& operator=(const ShmSegment&) = delete;
  ~ShmSegment();

  // Removes the name (not the mapping). Idempotent; only the creator does this.
  void unlink();

  std::byte* data() const { return data_; }
  size_t size() const { return size_; }
  const std::string& name() const { return name_; }

 private:
  ShmSegment(std::string name, std::byte* data, size_t size, bool owner);
  void reset();

  std::string name_;
  std::byte* data_ = nullptr;
  size_t size_ = 0;
  bool owner_ = false;  // created here: unlink on destruction if still named
};

}  // namespace spmd
