#include "comm/striped_stream.h"

#include <algorithm>

namespace spmd {

StripedStream::StripedStream(std::vector<std::unique_ptr<Stream>> streams, size_t stripe)
    : streams_(std::move(streams)), stripe_(stripe) {}

size_t StripedStream::write_some(std::span<const std::byte> first,
                                 std::span<const std::byte> second) {
  size_t total = 0;
  for (std::span<const std::byte> piece : {first, second}) {
    while (!piece.empty()) {
      const size_t n = std::min(piece.size(), left_in_stripe(written_));
      const size_t w = at(written_).write_some(piece.first(n), {});
      written_ += w;
      total += w;
      if (w < n) return total;  // that connection is full; the schedule cannot skip it
      piece = piece.subspan(w);
    }
  }
  return total;
}

std::span<const std::byte> StripedStream::readable() {
  const std::span<const std::byte> r = at(read_).readable();
  return r.first(std::min(r.size(), left_in_stripe(read_)));
}

void StripedStream::consume(size_t n) {
  at(read_).consume(n);
  read_ += n;
}

size_t StripedStream::read_direct(std::byte* dst, size_t n) {
  const size_t got = at(read_).read_direct(dst, std::min(n, left_in_stripe(read_)));
  read_ += got;
  return got;
}

int StripedStream::poll_fd() const { return at(read_).poll_fd(); }

std::vector<int> StripedStream::sockets() const {
  std::vector<int> all;
  for (const auto& s : streams_) {
    for (int fd : s->sockets()) all.push_back(fd);
  }
  return all;
}

}  // namespace spmd
