// Shapes and boxes of N-d arrays: plain values every layer shares.
//
// Part of the vocabulary (header only, no runtime state): the kernels read shapes, the shardings
// map devices to boxes, the arrays hold both. Row-major throughout.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "spmd/error.h"

namespace spmd {

// The extent of each dimension, major first; rank 0 for a scalar.
using Shape = std::vector<int64_t>;

// InvalidArgument: "the shape (a, b, …) has more elements than int64 can count (2^63 - 1)".
[[noreturn]] inline void throw_shape_overflow(const Shape& shape) {
  std::string dims;
  for (int64_t d : shape) dims += (dims.empty() ? "" : ", ") + std::to_string(d);
  throw InvalidArgument("the shape (" + dims +
                        ") has more elements than int64 can count (2^63 - 1)");
}

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

// The number of elements of an array of `shape` (1 for rank 0). Every shape product is taken
// here: one beyond int64 throws InvalidArgument naming the shape, before anything is allocated
// for it (a product that wrapped once made a 2^62 x 4 array of 0 bytes).
inline int64_t shape_size(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (!__builtin_mul_overflow(n, d, &n)) continue;
    for (int64_t e : shape) {
      if (e == 0) return 0;  // empty, however large the other dimensions
    }
    throw_shape_overflow(shape);
  }
  return n;
}

}  // namespace spmd
