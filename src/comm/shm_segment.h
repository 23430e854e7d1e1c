// A POSIX shared-memory segment mapped into this process: RAII over shm_open + mmap.
//
// The creator unlinks the name once every peer has mapped it, so a crashed job leaves nothing
// in /dev/shm for long; the mapping itself lives until the last process unmaps it. Names hold
// the creator's pid ("/spmd-<pid>-…"); a process that exits without its destructors (a peer's
// failure, fast_exit.h) or is killed in between leaves none behind either: the first unlinks
// them on the way out, spmdrun those of the second (unlink_left_by).
// Open to tools/: spmdrun removes the segment names a killed process left.
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

  // For exits that skip destructors (fast_exit.h, registered by create()): removes the name of
  // every segment this process created and still names. Best effort: skipped if another thread
  // is creating or unlinking a segment at that moment. Never throws.
  static void unlink_all_named() noexcept;
  // Removes the names of the segments a process `pid` that ended without removing them left in
  // /dev/shm (killed by a signal): spmdrun calls it for the processes it started. Returns how
  // many; never throws.
  static int unlink_left_by(long pid) noexcept;

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
