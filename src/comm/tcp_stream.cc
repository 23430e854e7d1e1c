#include "comm/tcp_stream.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "spmd/error.h"

namespace spmd {
namespace {

// Large enough that one recv() drains what a fast peer queued in a typical socket buffer; small
// enough to stay in L2 while the engine reduces from it.
constexpr size_t kStagingBytes = size_t{256} << 10;
// Payload reads at least this large skip the staging buffer when it is empty.
constexpr size_t kDirectReadMin = size_t{16} << 10;

}  // namespace

TcpStream::TcpStream(int fd, std::string peer)
    : fd_(fd), peer_(std::move(peer)), staging_(kStagingBytes) {
  const int one = 1;
  ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  ::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) | O_NONBLOCK);
}

TcpStream::~TcpStream() { ::close(fd_); }

void TcpStream::broken(const char* what, int err) const {
  throw Error(fmt::format("the TCP connection to {} broke while {}: {}", peer_, what,
                          err == 0 ? "the peer closed it" : std::strerror(err)));
}

size_t TcpStream::write_some(std::span<const std::byte> first, std::span<const std::byte> second) {
  iovec iov[2];
  int n = 0;
  for (std::span<const std::byte> piece : {first, second}) {
    if (piece.empty()) continue;
    iov[n].iov_base = const_cast<std::byte*>(piece.data());
    iov[n].iov_len = piece.size();
    ++n;
  }
  if (n == 0) return 0;
  msghdr msg{};
  msg.msg_iov = iov;
  msg.msg_iovlen = n;
  const ssize_t sent = ::sendmsg(fd_, &msg, MSG_DONTWAIT | MSG_NOSIGNAL);
  if (sent >= 0) return static_cast<size_t>(sent);
  if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return 0;
  broken("sending", errno);
}

std::span<const std::byte> TcpStream::readable() {
  if (begin_ == end_) {
    // Staged bytes sit at the address their stream offset has modulo 8, so 8-aligned payloads
    // (exchange.h) stay aligned in memory.
    begin_ = end_ = static_cast<size_t>(stream_offset_ % 8);
    const ssize_t got =
        ::recv(fd_, staging_.data() + begin_, staging_.size() - begin_, MSG_DONTWAIT);
    if (got > 0) {
      end_ += static_cast<size_t>(got);
    } else if (got == 0) {
      broken("receiving", 0);
    } else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
      broken("receiving", errno);
    }
  }
  return {staging_.data() + begin_, end_ - begin_};
}

void TcpStream::consume(size_t n) {
  begin_ += n;
  stream_offset_ += n;
}

size_t TcpStream::read_direct(std::byte* dst, size_t n) {
  if (begin_ != end_ || n < kDirectReadMin) return 0;
  const ssize_t got = ::recv(fd_, dst, n, MSG_DONTWAIT);
  if (got > 0) {
    stream_offset_ += static_cast<uint64_t>(got);
    return static_cast<size_t>(got);
  }
  if (got == 0) broken("receiving", 0);
  if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) broken("receiving", errno);
  return 0;
}

}  // namespace spmd
