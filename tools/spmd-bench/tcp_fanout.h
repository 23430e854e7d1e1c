// The physical reference for a barrier's release: one process writing a 16-byte message to each
// of N loopback TCP connections, and the time until every receiver has it. The sender sits in
// spmd-bench's driver process and the receivers in the simulated clients' helpers, beside the
// service's own connections to them, so the two are measured on the same path, round by round.
//
// Times are CLOCK_MONOTONIC nanoseconds (steady_clock), comparable across the processes of one
// machine.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace spmd::bench {

int64_t monotonic_ns();

// The sending end: listens on 127.0.0.1, accepts the receivers, writes one message to each.
class FanoutSender {
 public:
  FanoutSender();  // throws std::runtime_error when it cannot listen
  ~FanoutSender();
  FanoutSender(const FanoutSender&) = delete;
  FanoutSender& operator=(const FanoutSender&) = delete;

  int port() const { return port_; }
  // Accepts `n` connections; false if they do not all come within `timeout`.
  bool accept(int n, std::chrono::milliseconds timeout);
  // Writes the message to every accepted connection; returns when it started (ns).
  int64_t send_round();
  // Closes every accepted connection (the listener stays).
  void close_connections();

 private:
  int listener_ = -1;
  int port_ = 0;
  std::vector<int> connections_;
};

// The receiving ends: `count` connections to a FanoutSender, read by one epoll thread that
// notes when every connection has received each round's message.
class FanoutReceivers {
 public:
  // Connects; throws std::runtime_error when a connection fails.
  FanoutReceivers(int port, int count);
  ~FanoutReceivers();
  FanoutReceivers(const FanoutReceivers&) = delete;
  FanoutReceivers& operator=(const FanoutReceivers&) = delete;

  // When (ns) the last of the connections received round `round` (0, 1, …), or -1 when that
  // has not happened within `timeout`.
  int64_t wait_round(int round, std::chrono::milliseconds timeout);

 private:
  void read_loop();

  std::vector<int> fds_;
  int epoll_ = -1;
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<int64_t> round_done_ns_;  // by round
  std::thread reader_;
};

}  // namespace spmd::bench
