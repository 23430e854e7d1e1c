#include "comm/tcp_handshake.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <netdb.h>
#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>
#include <vector>

#include "coord/coord_client.h"
#include "spmd/error.h"

namespace spmd {
namespace {

using Clock = std::chrono::steady_clock;

// A connection that has not sent its handshake within this long is dropped.
constexpr auto kHandshakeTimeout = std::chrono::seconds(5);

std::string endpoint_of(const sockaddr_storage& ss) {
  char host[INET6_ADDRSTRLEN] = {};
  int port = 0;
  if (ss.ss_family == AF_INET6) {
    const auto* a = reinterpret_cast<const sockaddr_in6*>(&ss);
    ::inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof(host));
    port = ntohs(a->sin6_port);
    return fmt::format("[{}]:{}", host, port);
  }
  const auto* a = reinterpret_cast<const sockaddr_in*>(&ss);
  ::inet_ntop(AF_INET, &a->sin_addr, host, sizeof(host));
  port = ntohs(a->sin_port);
  return fmt::format("{}:{}", host, port);
}

// Splits "ip:port" / "[ip6]:port".
std::pair<std::string, std::string> split_endpoint(const std::string& endpoint) {
  const size_t colon = endpoint.rfind(':');
  if (colon == std::string::npos || colon == 0) {
    throw Error(
        fmt::format("malformed data-plane endpoint {:?} from the coordination service", endpoint));
  }
  std::string host = endpoint.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  return {host, endpoint.substr(colon + 1)};
}

struct Pending {
  int fd;
  std::string from;
  Clock::time_point since;
  Handshake hello;
  size_t got = 0;
};

}  // namespace

DataListener::DataListener(const std::string& address) {
  addrinfo hints{};
  hints.ai_flags = AI_NUMERICHOST | AI_PASSIVE;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  const int rc = ::getaddrinfo(address.empty() ? nullptr : address.c_str(), "0", &hints, &res);
  if (rc != 0) {
    throw Error(
        fmt::format("cannot listen for data connections on {:?}: {}", address, ::gai_strerror(rc)));
  }
  fd_ = ::socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const bool ok =
      fd_ >= 0 && ::bind(fd_, res->ai_addr, res->ai_addrlen) == 0 && ::listen(fd_, SOMAXCONN) == 0;
  ::freeaddrinfo(res);
  if (!ok) {
    const int err = errno;
    if (fd_ >= 0) ::close(fd_);
    throw Error(
        fmt::format("cannot listen for data connections on {}: {}", address, std::strerror(err)));
  }
  sockaddr_storage ss{};
  socklen_t len = sizeof(ss);
  ::getsockname(fd_, reinterpret_cast<sockaddr*>(&ss), &len);
  endpoint_ = endpoint_of(ss);
}

DataListener::~DataListener() {
  if (fd_ >= 0) ::close(fd_);
}

std::map<int, std::vector<int>> accept_peers(DataListener& listener, uint64_t group, int self,
                                             uint64_t nonce, const std::set<int>& from, int streams,
                                             Clock::time_point deadline, const CoordClient* coord,
                                             int* rejected) {
  std::map<int, std::vector<int>> accepted;
  for (int p : from) accepted[p].assign(streams, -1);
  size_t remaining = from.size() * static_cast<size_t>(streams);
  std::vector<Pending> pending;
  auto drop = [&](Pending& p, const std::string& why) {
    spdlog::warn("dropped a data connection from {}: {}", p.from, why);
    ::close(p.fd);
    p.fd = -1;
    if (rejected != nullptr) ++*rejected;
  };
  try {
    while (remaining > 0) {
      if (coord != nullptr && coord->aborted()) throw PeerFailure(coord->abort_reason());
      const auto now = Clock::now();
      if (now >= deadline) {
        std::vector<int> missing;
        for (const auto& [p, fds] : accepted) {
          if (std::count(fds.begin(), fds.end(), -1) > 0) missing.push_back(p);
        }
        throw DeadlineExceeded(fmt::format(
            "setting up a communicator: the processes at group positions {} never connected to "
            "this process's data listener {}",
            fmt::join(missing, ", "), listener.endpoint()));
      }
      std::vector<pollfd> fds{{listener.fd(), POLLIN, 0}};
      for (const Pending& p : pending) fds.push_back({p.fd, POLLIN, 0});
      ::poll(fds.data(), fds.size(), 10);
      if (fds[0].revents & POLLIN) {
        sockaddr_storage ss{};
        socklen_t len = sizeof(ss);
        const int fd = ::accept4(listener.fd(), reinterpret_cast<sockaddr*>(&ss), &len,
                                 SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd >= 0) pending.push_back({fd, endpoint_of(ss), Clock::now(), {}, 0});
      }
      for (size_t i = 0; i < pending.size(); ++i) {
        Pending& p = pending[i];
        if (!(fds[i + 1].revents & (POLLIN | POLLHUP | POLLERR))) {
          if (Clock::now() - p.since > kHandshakeTimeout) drop(p, "no handshake within 5 s");
          continue;
        }
        auto* into = reinterpret_cast<char*>(&p.hello) + p.got;
        const ssize_t n = ::recv(p.fd, into, sizeof(Handshake) - p.got, 0);
        if (n <= 0) {
          if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
          drop(p, "closed before completing the handshake");
          continue;
        }
        p.got += static_cast<size_t>(n);
        if (p.got < sizeof(Handshake)) continue;
        const Handshake& h = p.hello;
        const Handshake want{};
        if (h.magic != want.magic || h.version != want.version) {
          drop(p, "not an spmd data connection (bad magic or version)");
        } else if (h.group != group || h.to != static_cast<uint32_t>(self) || h.nonce != nonce) {
          drop(p, "a handshake for another group, position or job");
        } else if (!from.contains(static_cast<int>(h.from)) ||
                   h.streams != static_cast<uint32_t>(streams) ||
                   h.stream >= static_cast<uint32_t>(streams) ||
                   accepted[static_cast<int>(h.from)][h.stream] != -1) {
          drop(p, fmt::format("unexpected or repeated connection {}/{} from group position {}",
                              h.stream, h.streams, h.from));
        } else {
          accepted[static_cast<int>(h.from)][h.stream] = p.fd;
          p.fd = -1;
          --remaining;
        }
      }
      std::erase_if(pending, [](const Pending& p) { return p.fd < 0; });
    }
  } catch (...) {
    for (Pending& p : pending) ::close(p.fd);
    for (auto& [pos, fds] : accepted) {
      for (int fd : fds) {
        if (fd >= 0) ::close(fd);
      }
    }
    throw;
  }
  for (Pending& p : pending) ::close(p.fd);
  return accepted;
}

int connect_peer(const std::string& endpoint, const Handshake& hello, Clock::time_point deadline) {
  const auto [host, port] = split_endpoint(endpoint);
  addrinfo hints{};
  hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  const int rc = ::getaddrinfo(host.c_str(), port.c_str(), &hints, &res);
  if (rc != 0) {
    throw Error(fmt::format("malformed data-plane endpoint {}: {}", endpoint, ::gai_strerror(rc)));
  }
  std::string last_error;
  for (;;) {
    const int fd = ::socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd >= 0 && ::connect(fd, res->ai_addr, res->ai_addrlen) == 0) {
      const ssize_t n = ::send(fd, &hello, sizeof(hello), MSG_NOSIGNAL);
      if (n == static_cast<ssize_t>(sizeof(hello))) {
        ::freeaddrinfo(res);
        return fd;
      }
    }
    last_error = std::strerror(errno);
    if (fd >= 0) ::close(fd);
    if (Clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ::freeaddrinfo(res);
  throw Error(fmt::format("cannot connect to a peer's data listener {}: {}", endpoint, last_error));
}

}  // namespace spmd
