// One epoch's global order (shuffled_index, data_loader.h) with its key computed once, for the
// loader's per-record loop.
#pragma once

#include <cstdint>
#include <span>

namespace spmd::data {

class Shuffle {
 public:
  // The order of [0, n) for (seed, epoch); n ≥ 0.
  Shuffle(int64_t n, uint64_t seed, int64_t epoch);
  // The record at `position` (0 ≤ position < n; not checked here).
  int64_t operator()(int64_t position) const;
  // out[k] = (*this)(first + k·stride), computed four at a time (the positions must be in
  // [0, n); not checked here).
  void fill(int64_t first, int64_t stride, std::span<int64_t> out) const;

 private:
  // One pass of the Feistel network over [0, 2^bits); walk() repeats it until below n.
  uint64_t pass(uint64_t x) const;
  int64_t walk(uint64_t x) const;

  int64_t n_;
  uint64_t key_;
  int half_ = 0;
  uint64_t mask_ = 0;
};

}  // namespace spmd::data
