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
#include <utility>
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

namespace {

// One accept_peers() call: the connections accepted so far, by position and stream, and those
// still owing their handshake. Closes whatever it still holds when destroyed.
class PeerAcceptor {
 public:
  PeerAcceptor(DataListener& listener, uint64_t group, int self, uint64_t nonce,
               const std::set<int>& from, int streams, int* rejected)
      : listener_(listener),
        group_(group),
        self_(self),
        nonce_(nonce),
        from_(from),
        streams_(streams),
        rejected_(rejected),
        remaining_(from.size() * static_cast<size_t>(streams)) {
    for (int p : from) accepted_[p].assign(static_cast<size_t>(streams), -1);
  }

  ~PeerAcceptor() {
    for (Pending& p : pending_) ::close(p.fd);
    for (auto& [pos, fds] : accepted_) {
      for (int fd : fds) {
        if (fd >= 0) ::close(fd);
      }
    }
  }
  PeerAcceptor(const PeerAcceptor&) = delete;
  PeerAcceptor& operator=(const PeerAcceptor&) = delete;

  std::map<int, std::vector<int>> run(Clock::time_point deadline, const CoordClient* coord) {
    while (remaining_ > 0) {
      if (coord != nullptr && coord->aborted()) throw PeerFailure(coord->abort_reason());
      if (Clock::now() >= deadline) throw_missing();
      std::vector<pollfd> fds{{listener_.fd(), POLLIN, 0}};
      for (const Pending& p : pending_) fds.push_back({p.fd, POLLIN, 0});
      ::poll(fds.data(), fds.size(), 10);
      if (fds[0].revents & POLLIN) accept_one();
      for (size_t i = 0; i < pending_.size() && i + 1 < fds.size(); ++i) {
        if (fds[i + 1].revents & (POLLIN | POLLHUP | POLLERR)) {
          read_handshake(pending_[i]);
        } else if (Clock::now() - pending_[i].since > kHandshakeTimeout) {
          drop(pending_[i], "no handshake within 5 s");
        }
      }
      std::erase_if(pending_, [](const Pending& p) { return p.fd < 0; });
    }
    return std::exchange(accepted_, {});
  }

 private:
  [[noreturn]] void throw_missing() const {
    std::vector<int> missing;
    for (const auto& [p, fds] : accepted_) {
      if (std::count(fds.begin(), fds.end(), -1) > 0) missing.push_back(p);
    }
    throw DeadlineExceeded(fmt::format(
        "setting up a communicator: the processes at group positions {} never connected to "
        "this process's data listener {}",
        fmt::join(missing, ", "), listener_.endpoint()));
  }

  void accept_one() {
    sockaddr_storage ss{};
    socklen_t len = sizeof(ss);
    const int fd = ::accept4(listener_.fd(), reinterpret_cast<sockaddr*>(&ss), &len,
                             SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd >= 0) pending_.push_back({fd, endpoint_of(ss), Clock::now(), {}, 0});
  }

  void drop(Pending& p, const std::string& why) {
    spdlog::warn("dropped a data connection from {}: {}", p.from, why);
    ::close(p.fd);
    p.fd = -1;
    if (rejected_ != nullptr) ++*rejected_;
  }

  // Reads what is there of p's handshake; a complete one is checked field by field.
  void read_handshake(Pending& p) {
    auto* into = reinterpret_cast<char*>(&p.hello) + p.got;
    const ssize_t n = ::recv(p.fd, into, sizeof(Handshake) - p.got, 0);
    if (n <= 0) {
      if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
      drop(p, "closed before completing the handshake");
      return;
    }
    p.got += static_cast<size_t>(n);
    if (p.got == sizeof(Handshake)) check_handshake(p);
  }

  void check_handshake(Pending& p) {
    const Handshake& h = p.hello;
    const Handshake want{};
    if (h.magic != want.magic || h.version != want.version) {
      drop(p, "not an spmd data connection (bad magic or version)");
    } else if (h.group != group_ || h.to != static_cast<uint32_t>(self_) || h.nonce != nonce_) {
      drop(p, "a handshake for another group, position or job");
    } else if (!from_.contains(static_cast<int>(h.from)) ||
               h.streams != static_cast<uint32_t>(streams_) ||
               h.stream >= static_cast<uint32_t>(streams_) ||
               accepted_[static_cast<int>(h.from)][h.stream] != -1) {
      drop(p, fmt::format("unexpected or repeated connection {}/{} from group position {}",
                          h.stream, h.streams, h.from));
    } else {
      accepted_[static_cast<int>(h.from)][h.stream] = p.fd;
      p.fd = -1;
      --remaining_;
    }
  }

  DataListener& listener_;
  uint64_t group_;
  int self_;
  uint64_t nonce_;
  const std::set<int>& from_;
  int streams_;
  int* rejected_;
  size_t remaining_;
  std::map<int, std::vector<int>> accepted_;
  std::vector<Pending> pending_;
};

}  // namespace

std::map<int, std::vector<int>> accept_peers(DataListener& listener, uint64_t group, int self,
                                             uint64_t nonce, const std::set<int>& from, int streams,
                                             Clock::time_point deadline, const CoordClient* coord,
                                             int* rejected) {
  return PeerAcceptor(listener, group, self, nonce, from, streams, rejected).run(deadline, coord);
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
