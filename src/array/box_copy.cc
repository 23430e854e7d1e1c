#include "array/box_copy.h"

#include <cstring>

namespace spmd {
namespace {

// Row-major strides in elements.
std::vector<int64_t> strides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) s[i - 1] = s[i] * shape[i];
  return s;
}

}  // namespace

void copy_box(const std::byte* src, const std::vector<int64_t>& src_shape,
              const std::vector<int64_t>& src_start, std::byte* dst,
              const std::vector<int64_t>& dst_shape, const std::vector<int64_t>& dst_start,
              const std::vector<int64_t>& extent, size_t elem) {
  const size_t rank = extent.size();
  for (int64_t e : extent) {
    if (e == 0) return;
  }
  if (rank == 0) {
    std::memcpy(dst, src, elem);
    return;
  }
  const auto ss = strides(src_shape);
  const auto ds = strides(dst_shape);
  // Runs along the last dimension are contiguous: one memcpy each.
  const size_t run = static_cast<size_t>(extent[rank - 1]) * elem;
  std::vector<int64_t> pos(rank - 1, 0);
  while (true) {
    int64_t so = src_start[rank - 1];
    int64_t d_off = dst_start[rank - 1];
    for (size_t i = 0; i + 1 < rank; ++i) {
      so += (src_start[i] + pos[i]) * ss[i];
      d_off += (dst_start[i] + pos[i]) * ds[i];
    }
    std::memcpy(dst + d_off * static_cast<int64_t>(elem), src + so * static_cast<int64_t>(elem),
                run);
    size_t i = rank - 1;
    while (i > 0) {
      --i;
      if (++pos[i] < extent[i]) break;
      pos[i] = 0;
      if (i == 0) return;
    }
    if (rank == 1) return;
  }
}

void for_each_run(const std::vector<int64_t>& shape, const std::vector<int64_t>& start,
                  const std::vector<int64_t>& extent, size_t elem,
                  const std::function<void(size_t offset, size_t bytes)>& fn) {
  const size_t rank = extent.size();
  for (int64_t e : extent) {
    if (e == 0) return;
  }
  if (rank == 0) {
    fn(0, elem);
    return;
  }
  const auto st = strides(shape);
  const size_t run = static_cast<size_t>(extent[rank - 1]) * elem;
  std::vector<int64_t> pos(rank - 1, 0);
  while (true) {
    int64_t at = start[rank - 1];
    for (size_t i = 0; i + 1 < rank; ++i) at += (start[i] + pos[i]) * st[i];
    fn(static_cast<size_t>(at) * elem, run);
    if (rank == 1) return;
    size_t i = rank - 1;
    while (i > 0) {
      --i;
      if (++pos[i] < extent[i]) break;
      pos[i] = 0;
      if (i == 0) return;
    }
  }
}

}  // namespace spmd
