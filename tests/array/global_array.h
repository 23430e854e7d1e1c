// The global array the array probes check shards against: int32 elements equal to their flat
// index, so any misplaced byte shows.
#pragma once

#include <spmd/spmd.h>

#include <numeric>
#include <vector>

namespace spmd::testing {

inline HostArray global_array(Shape shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<int32_t> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), 0);
  return HostArray::from_vector(v, std::move(shape));
}

}  // namespace spmd::testing
