#include "spmd-bench/status_viewers.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <optional>
#include <string>

namespace spmd::bench {
namespace {

using Clock = std::chrono::steady_clock;

// One GET of /status.json: the body, or nullopt when the answer is not a 200.
std::optional<std::string> get_status_json(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  timeval tv{30, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));  // connect() and send() too
  std::string answer;
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0) {
    const std::string request = "GET /status.json HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
    if (send(fd, request.data(), request.size(), MSG_NOSIGNAL) ==
        static_cast<ssize_t>(request.size())) {
      char buf[1 << 16];
      ssize_t n = 0;
      while ((n = recv(fd, buf, sizeof(buf), 0)) > 0) answer.append(buf, static_cast<size_t>(n));
    }
  }
  close(fd);
  const size_t body = answer.find("\r\n\r\n");
  if (answer.rfind("HTTP/1.1 200", 0) != 0 || body == std::string::npos) return std::nullopt;
  return answer.substr(body + 4);
}

}  // namespace

StatusViewers::StatusViewers(int port, int count) {
  for (int i = 0; i < count; ++i) threads_.emplace_back([this, port] { view(port); });
}

StatusViewers::~StatusViewers() { stop(); }

void StatusViewers::view(int port) {
  while (!stop_) {
    const auto t0 = Clock::now();
    const auto json = get_status_json(port);
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    {
      std::lock_guard lock(mu_);
      if (json) {
        seen_.wait_ms.push_back(ms);
        seen_.last_json = *json;
      } else {
        ++seen_.failures;
      }
    }
    // A second after the answer, in slices so that stop() is quick.
    for (int i = 0; i < 20 && !stop_; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

StatusViewers::Seen StatusViewers::stop() {
  stop_ = true;
  for (auto& t : threads_) {
    if (t.joinable()) t.join();
  }
  std::lock_guard lock(mu_);
  return seen_;
}

}  // namespace spmd::bench
