// Copying one row of `bytes` bytes, for the kernels that move rows one at a time (take, scatter):
// rows of one element (1, 2, 4 or 8 bytes, the common case of a gather of single elements) are
// copied with a fixed-size memcpy, which compiles to one load and one store, where a call of
// memcpy with a run-time size costs more than the copy.
#pragma once

#include <cstddef>
#include <cstring>

namespace spmd::kernels {

inline void copy_row(std::byte* to, const std::byte* from, size_t bytes) {
  switch (bytes) {
    case 1:
      std::memcpy(to, from, 1);
      return;
    case 2:
      std::memcpy(to, from, 2);
      return;
    case 4:
      std::memcpy(to, from, 4);
      return;
    case 8:
      std::memcpy(to, from, 8);
      return;
    default:
      std::memcpy(to, from, bytes);
  }
}

}  // namespace spmd::kernels
