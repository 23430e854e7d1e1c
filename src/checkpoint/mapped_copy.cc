#include "checkpoint/mapped_copy.h"

#include <cstring>

#include "runtime/bus_error_guard.h"

namespace spmd::checkpoint {
namespace {

// Pieces small enough to stay in L2 between the hash reading them and the copy.
constexpr size_t kCopyPiece = size_t{256} << 10;

}  // namespace

bool copy_mapped(const std::byte* mapped, std::byte* out, size_t n, XXH3_state_t* hash) {
  // C calls only: nothing to destroy if a SIGBUS leaves the loop.
  return catching_bus_errors([&] {
    for (size_t done = 0; done < n; done += kCopyPiece) {
      const size_t len = n - done < kCopyPiece ? n - done : kCopyPiece;
      XXH3_64bits_update(hash, mapped + done, len);
      std::memcpy(out + done, mapped + done, len);
    }
  });
}

}  // namespace spmd::checkpoint
