#include "comm/stream.h"

#include <fmt/format.h>
#include <unistd.h>

#include "spmd/error.h"

namespace spmd {

std::optional<ReferenceBody> Stream::offer_reference(const std::byte* data, size_t bytes,
                                                     uint64_t ticket) {
  ReferenceBody body;
  body.key = static_cast<uint64_t>(::getpid());
  body.address = reinterpret_cast<uint64_t>(data);
  return body;
}

const std::byte* Stream::fetch_reference(const ReferenceBody& body, size_t offset, std::byte* dst,
                                         size_t n, Waiter& waiter) {
  throw Error(fmt::format("a {} stream carries no by-reference payloads", transport()));
}

}  // namespace spmd
