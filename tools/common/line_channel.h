// A line-oriented command channel between a driver and a helper process it started, over the
// helper's stdin and stdout pipes. spmd-bench drives its simulated cluster with it, and the
// tests drive the same helpers.
//
// Lines are written whole (one write() up to PIPE_BUF is atomic) and read with a deadline, so a
// helper that dies or hangs is an error, never a hang. Not thread-safe for reading; write_line
// may be called from several threads.
#pragma once

#include <chrono>
#include <mutex>
#include <optional>
#include <string>

namespace spmd::tools {

class LineChannel {
 public:
  // Reads lines from `read_fd` and writes them to `write_fd`; closes both when `owns_fds`.
  LineChannel(int read_fd, int write_fd, bool owns_fds);
  ~LineChannel();
  LineChannel(const LineChannel&) = delete;
  LineChannel& operator=(const LineChannel&) = delete;

  // Writes `line` and a newline. Returns false when the other side is gone.
  bool write_line(const std::string& line);

  // The next line, without its newline, or nullopt at end of input or once `timeout` passes.
  std::optional<std::string> read_line(std::chrono::milliseconds timeout);

 private:
  int read_fd_;
  int write_fd_;
  bool owns_fds_;
  std::string buffer_;
  std::mutex write_mu_;
};

}  // namespace spmd::tools
