#include "comm/stream.h"

#include <fmt/format.h>

#include "spmd/error.h"

namespace spmd {

std::optional<ReferenceBody> Stream::offer_reference(const std::byte* data, size_t bytes,
                                                     uint64_t ticket) {
  return std::nullopt;
}

const std::byte* Stream::fetch_reference(const ReferenceBody& body, size_t offset, std::byte* dst,
                                         size_t n, Waiter& waiter) {
  throw Error(fmt::format("a {} stream carries no by-reference payloads", transport()));
}

std::byte* Stream::reach_shared(const ReferenceBody& body, size_t offset, size_t n,
                                PeerAccess access) {
  throw Error(fmt::format("a {} stream reaches no peer's shared buffers", transport()));
}

}  // namespace spmd
