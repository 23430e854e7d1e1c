#include "spmd-bench/tcp_fanout_floor.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

namespace spmd::bench {
namespace {

using Clock = std::chrono::steady_clock;

// Closes every fd it holds.
struct Fds {
  std::vector<int> fds;
  ~Fds() {
    for (int fd : fds) close(fd);
  }
  int add(int fd) {
    if (fd >= 0) fds.push_back(fd);
    return fd;
  }
};

}  // namespace

double tcp_fanout_floor_ms(int connections, int rounds) {
  Fds all;
  const int listener = all.add(socket(AF_INET, SOCK_STREAM, 0));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  if (listener < 0 || bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      listen(listener, 4096) != 0 ||
      getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    std::fprintf(stderr, "tcp floor: cannot listen: %s\n", std::strerror(errno));
    return -1;
  }
  std::vector<int> senders;
  std::vector<int> receivers;
  const int one = 1;
  for (int i = 0; i < connections; ++i) {
    const int c = all.add(socket(AF_INET, SOCK_STREAM, 0));
    if (c < 0 || connect(c, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
      std::fprintf(stderr, "tcp floor: cannot connect: %s\n", std::strerror(errno));
      return -1;
    }
    const int s = all.add(accept(listener, nullptr, nullptr));
    if (s < 0) {
      std::fprintf(stderr, "tcp floor: cannot accept: %s\n", std::strerror(errno));
      return -1;
    }
    setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    senders.push_back(s);
    receivers.push_back(c);
  }
  const int ep = all.add(epoll_create1(0));
  for (int c : receivers) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = c;
    epoll_ctl(ep, EPOLL_CTL_ADD, c, &ev);
  }
  std::vector<double> times;
  char msg[16] = {};
  for (int r = 0; r < rounds; ++r) {
    std::atomic<bool> started{false};
    int received = 0;
    std::thread receiver([&] {
      epoll_event events[128];
      char buf[64];
      const auto deadline = Clock::now() + std::chrono::seconds(30);
      while (received < connections && Clock::now() < deadline) {
        const int n = epoll_wait(ep, events, 128, 100);
        for (int i = 0; i < n; ++i) {
          if (recv(events[i].data.fd, buf, sizeof(buf), 0) > 0) ++received;
        }
      }
    });
    while (!started.exchange(true)) {
    }
    const auto t0 = Clock::now();
    for (int s : senders) {
      if (send(s, msg, sizeof(msg), 0) != sizeof(msg)) break;
    }
    receiver.join();
    times.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    if (received < connections) return -1;
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

}  // namespace spmd::bench
