// Copying an N-d box between two row-major byte buffers. Pure; thread-safe for distinct
// destinations.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace spmd {

// Copies the box of extent `extent` starting at `src_start` in `src` (shape `src_shape`) to
// `dst_start` in `dst` (shape `dst_shape`); elements are `elem` bytes. The caller has checked
// that both boxes fit.
void copy_box(const std::byte* src, const std::vector<int64_t>& src_shape,
              const std::vector<int64_t>& src_start, std::byte* dst,
              const std::vector<int64_t>& dst_shape, const std::vector<int64_t>& dst_start,
              const std::vector<int64_t>& extent, size_t elem);

// Calls `fn(offset, bytes)` for each contiguous run (along the last dimension) of the box of
// `extent` at `start` in a row-major buffer of `shape`, in row-major order; offsets are in bytes.
void for_each_run(const std::vector<int64_t>& shape, const std::vector<int64_t>& start,
                  const std::vector<int64_t>& extent, size_t elem,
                  const std::function<void(size_t offset, size_t bytes)>& fn);

}  // namespace spmd
