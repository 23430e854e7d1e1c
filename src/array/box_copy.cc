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

// Calls row(pos) once per row of the box of `extent` (rank >= 1, no extent 0): `pos` holds the
// row's index in every dimension but the last, in row-major order.
template <class Row>
void for_each_row(const std::vector<int64_t>& extent, Row&& row) {
  const size_t rank = extent.size();
  std::vector<int64_t> pos(rank - 1, 0);
  while (true) {
    row(pos);
    size_t i = rank - 1;
    while (true) {
      if (i == 0) return;
      --i;
      if (++pos[i] < extent[i]) break;
      pos[i] = 0;
    }
  }
}

bool empty_box(const std::vector<int64_t>& extent) {
  for (int64_t e : extent) {
    if (e == 0) return true;
  }
  return false;
}

}  // namespace

void copy_box(const std::byte* src, const std::vector<int64_t>& src_shape,
              const std::vector<int64_t>& src_start, std::byte* dst,
              const std::vector<int64_t>& dst_shape, const std::vector<int64_t>& dst_start,
              const std::vector<int64_t>& extent, size_t elem) {
  if (empty_box(extent)) return;
  const size_t rank = extent.size();
  if (rank == 0) {
    std::memcpy(dst, src, elem);
    return;
  }
  const auto ss = strides(src_shape);
  const auto ds = strides(dst_shape);
  // Runs along the last dimension are contiguous: one memcpy each.
  const size_t run = static_cast<size_t>(extent[rank - 1]) * elem;
  for_each_row(extent, [&](const std::vector<int64_t>& pos) {
    int64_t so = src_start[rank - 1];
    int64_t d_off = dst_start[rank - 1];
    for (size_t i = 0; i + 1 < rank; ++i) {
      so += (src_start[i] + pos[i]) * ss[i];
      d_off += (dst_start[i] + pos[i]) * ds[i];
    }
    std::memcpy(dst + d_off * static_cast<int64_t>(elem), src + so * static_cast<int64_t>(elem),
                run);
  });
}

void for_each_run(const std::vector<int64_t>& shape, const std::vector<int64_t>& start,
                  const std::vector<int64_t>& extent, size_t elem,
                  const std::function<void(size_t offset, size_t bytes)>& fn) {
  if (empty_box(extent)) return;
  const size_t rank = extent.size();
  if (rank == 0) {
    fn(0, elem);
    return;
  }
  const auto st = strides(shape);
  const size_t run = static_cast<size_t>(extent[rank - 1]) * elem;
  for_each_row(extent, [&](const std::vector<int64_t>& pos) {
    int64_t at = start[rank - 1];
    for (size_t i = 0; i + 1 < rank; ++i) at += (start[i] + pos[i]) * st[i];
    fn(static_cast<size_t>(at) * elem, run);
  });
}

}  // namespace spmd
