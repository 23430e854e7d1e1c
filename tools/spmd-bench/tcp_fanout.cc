#include "spmd-bench/tcp_fanout.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

namespace spmd::bench {

namespace {

constexpr size_t kMessageBytes = 16;

[[noreturn]] void fail(const char* what) {
  throw std::runtime_error(std::string("tcp fan-out: ") + what + ": " + std::strerror(errno));
}

sockaddr_in loopback(int port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  return addr;
}

}  // namespace

int64_t monotonic_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

FanoutSender::FanoutSender() {
  listener_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr = loopback(0);
  socklen_t len = sizeof(addr);
  if (listener_ < 0 || bind(listener_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      listen(listener_, 4096) != 0 ||
      getsockname(listener_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    if (listener_ >= 0) close(listener_);
    fail("cannot listen");
  }
  port_ = ntohs(addr.sin_port);
}

FanoutSender::~FanoutSender() {
  close_connections();
  close(listener_);
}

bool FanoutSender::accept(int n, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  const int one = 1;
  while (static_cast<int>(connections_.size()) < n) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    pollfd p{listener_, POLLIN, 0};
    if (left.count() <= 0 || poll(&p, 1, static_cast<int>(left.count())) <= 0) return false;
    const int fd = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) return false;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    connections_.push_back(fd);
  }
  return true;
}

int64_t FanoutSender::send_round() {
  const char msg[kMessageBytes] = {};
  const int64_t t0 = monotonic_ns();
  for (int fd : connections_) {
    if (send(fd, msg, sizeof(msg), MSG_NOSIGNAL) != static_cast<ssize_t>(sizeof(msg))) break;
  }
  return t0;
}

void FanoutSender::close_connections() {
  for (int fd : connections_) close(fd);
  connections_.clear();
}

FanoutReceivers::FanoutReceivers(int port, int count) {
  epoll_ = epoll_create1(EPOLL_CLOEXEC);
  if (epoll_ < 0) fail("epoll_create1");
  const sockaddr_in addr = loopback(port);
  for (int i = 0; i < count; ++i) {
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) fail("socket");
    fds_.push_back(fd);
    if (connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0) fail("connect");
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = fd;
    epoll_ctl(epoll_, EPOLL_CTL_ADD, fd, &ev);
  }
  reader_ = std::thread([this] { read_loop(); });
}

FanoutReceivers::~FanoutReceivers() {
  stop_ = true;
  reader_.join();
  for (int fd : fds_) close(fd);
  close(epoll_);
}

void FanoutReceivers::read_loop() {
  // Bytes received over all connections; round r is complete at (r + 1) x count x 16 bytes.
  size_t received = 0;
  const size_t per_round = fds_.size() * kMessageBytes;
  epoll_event events[256];
  char buf[256];
  while (!stop_) {
    const int n = epoll_wait(epoll_, events, 256, 50);
    for (int i = 0; i < n; ++i) {
      const ssize_t got = recv(events[i].data.fd, buf, sizeof(buf), 0);
      if (got > 0) received += static_cast<size_t>(got);
    }
    if (n <= 0 || per_round == 0) continue;
    const int64_t now = monotonic_ns();
    std::lock_guard lock(mu_);
    while ((round_done_ns_.size() + 1) * per_round <= received) round_done_ns_.push_back(now);
    cv_.notify_all();
  }
}

int64_t FanoutReceivers::wait_round(int round, std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  if (!cv_.wait_for(lock, timeout,
                    [&] { return static_cast<int>(round_done_ns_.size()) > round; })) {
    return -1;
  }
  return round_done_ns_[static_cast<size_t>(round)];
}

}  // namespace spmd::bench
