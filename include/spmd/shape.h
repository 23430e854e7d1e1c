// Shapes and boxes of N-d arrays: plain values every layer shares.
//
// Part of the vocabulary (header only, no runtime state): the kernels read shapes, the shardings
// map devices to boxes, the arrays hold both. Row-major throughout.
#pragma once

#include <cstdint>
#include <vector>

namespace spmd {

// The extent of each dimension, major first; rank 0 for a scalar.
using Shape = std::vector<int64_t>;

// [start, stop) along one dimension.
struct Slice {
  int64_t start = 0;
  int64_t stop = 0;
  int64_t size() const { return stop - start; }
  bool operator==(const Slice& o) const { return start == o.start && stop == o.stop; }
  bool operator<(const Slice& o) const {
    return start != o.start ? start < o.start : stop < o.stop;
  }
};

// A box: one slice per dimension.
using Index = std::vector<Slice>;

// The number of elements of an array of `shape` (1 for rank 0).
inline int64_t shape_size(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

}  // namespace spmd
