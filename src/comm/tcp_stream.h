// The tcp transport's stream: one connected, non-blocking TCP socket carrying both directions
// between two processes. Owns the descriptor.
//
// Reads go through a staging buffer (so readable() can hand out contiguous bytes) except large
// payload reads with nothing staged, which land in the destination directly. A peer that closes
// or resets the connection turns every later call into an spmd::Error naming it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "comm/stream.h"

namespace spmd {

class TcpStream final : public Stream {
 public:
  // `fd` is connected; it is made non-blocking with TCP_NODELAY. `peer` names the other process.
  TcpStream(int fd, std::string peer);
  ~TcpStream() override;
  TcpStream(const TcpStream&) = delete;
  TcpStream& operator=(const TcpStream&) = delete;

  size_t write_some(std::span<const std::byte> first, std::span<const std::byte> second) override;
  std::span<const std::byte> readable() override;
  void consume(size_t n) override;
  size_t read_direct(std::byte* dst, size_t n) override;
  int poll_fd() const override { return fd_; }
  const char* transport() const override { return "tcp"; }

 private:
  [[noreturn]] void broken(const char* what, int err) const;

  int fd_;
  std::string peer_;
  std::vector<std::byte> staging_;
  size_t begin_ = 0;  // [begin_, end_) of staging_ is unread
  size_t end_ = 0;
  uint64_t stream_offset_ = 0;  // bytes ever read
};

}  // namespace spmd
