#include "common/line_channel.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>

namespace spmd::tools {

LineChannel::LineChannel(int read_fd, int write_fd, bool owns_fds)
    : read_fd_(read_fd), write_fd_(write_fd), owns_fds_(owns_fds) {}

LineChannel::~LineChannel() {
  if (!owns_fds_) return;
  if (read_fd_ >= 0) close(read_fd_);
  if (write_fd_ >= 0 && write_fd_ != read_fd_) close(write_fd_);
}

bool LineChannel::write_line(const std::string& line) {
  const std::string data = line + "\n";
  std::lock_guard lock(write_mu_);
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = write(write_fd_, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

std::optional<std::string> LineChannel::read_line(std::chrono::milliseconds timeout) {
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + timeout;
  while (true) {
    if (const size_t nl = buffer_.find('\n'); nl != std::string::npos) {
      std::string line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      return line;
    }
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return std::nullopt;
    pollfd p{read_fd_, POLLIN, 0};
    const int ready = poll(&p, 1, static_cast<int>(left));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) return std::nullopt;
    char chunk[4096];
    const ssize_t n = read(read_fd_, chunk, sizeof(chunk));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return std::nullopt;  // end of input: the other side is gone
    buffer_.append(chunk, static_cast<size_t>(n));
  }
}

}  // namespace spmd::tools
