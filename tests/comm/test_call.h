// The call fingerprint the in-process exchange tests run under: an all-gather of `count` float32
// values, call number `sequence`.
#pragma once

#include <cstdint>

#include "comm/fingerprint.h"

namespace spmd::testing {

inline Fingerprint test_call(uint64_t sequence, uint64_t count) {
  Fingerprint f;
  f.sequence = sequence;
  f.op = CollectiveOp::kAllGather;
  f.dtype = DType::kFloat32;
  f.count = count;
  return f;
}

}  // namespace spmd::testing
