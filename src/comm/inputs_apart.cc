// Inputs that outputs cannot overwrite mid-call: for the ops whose local copies or receives
// would otherwise clobber an input another participant still has to send (in-place all_to_all
// and permute).
#include <cstring>

#include "comm/call.h"

namespace spmd {

std::vector<const std::byte*> inputs_apart(Call& c, size_t bytes) {
  const size_t L = c.local.size();
  std::vector<const std::byte*> in(L);
  bool overlap = false;
  for (size_t i = 0; i < L; ++i) {
    for (size_t j = 0; j < L; ++j) {
      const std::byte* a = c.local[i].in;
      const std::byte* b = c.local[j].out;
      overlap |= a < b + bytes && b < a + bytes;
    }
  }
  if (!overlap || bytes == 0) {
    for (size_t i = 0; i < L; ++i) in[i] = c.local[i].in;
    return in;
  }
  std::byte* copy = c.scratch.get(1, L * bytes);
  for (size_t i = 0; i < L; ++i) {
    std::memcpy(copy + i * bytes, c.local[i].in, bytes);
    in[i] = copy + i * bytes;
  }
  return in;
}

}  // namespace spmd
