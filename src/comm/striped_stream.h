// Several TCP connections to one peer used as one ordered stream: byte offset o travels on
// connection (o / stripe) mod K. Where one connection cannot fill a link (one core's worth of
// kernel work per connection on fast NICs), K connections let K cores carry it; order needs no
// sequence numbers because both ends follow the same fixed schedule.
//
// Not thread-safe, like every Stream.
#pragma once

#include <memory>
#include <vector>

#include "comm/stream.h"

namespace spmd {

class StripedStream final : public Stream {
 public:
  // `streams` are connected to the same peer, in the same order on both ends. `stripe` is a
  // multiple of 8 (so payload alignment carries over).
  StripedStream(std::vector<std::unique_ptr<Stream>> streams, size_t stripe);

  size_t write_some(std::span<const std::byte> first, std::span<const std::byte> second) override;
  std::span<const std::byte> readable() override;
  void consume(size_t n) override;
  size_t read_direct(std::byte* dst, size_t n) override;
  int poll_fd() const override;
  std::vector<int> sockets() const override;
  const char* transport() const override { return "tcp"; }

 private:
  Stream& at(uint64_t offset) const { return *streams_[(offset / stripe_) % streams_.size()]; }
  size_t left_in_stripe(uint64_t offset) const { return stripe_ - offset % stripe_; }

  std::vector<std::unique_ptr<Stream>> streams_;
  size_t stripe_;
  uint64_t written_ = 0;
  uint64_t read_ = 0;
};

}  // namespace spmd
