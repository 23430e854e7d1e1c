// One local participant's part of a collective call, as a Communicator hands it to its group:
// the call's identity (op, dtype, reduction, root, count) and the participant's own buffers and
// lists. It borrows everything it points to for the length of the call.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "comm/call.h"
#include "spmd/communicator.h"

namespace spmd {

struct Request {
  CollectiveOp op = CollectiveOp::kBarrier;
  DType dtype = DType::kFloat32;
  ReduceOp reduce = ReduceOp::kSum;
  int root = -1;
  uint64_t count = 0;
  LocalBuffers buffers;
  std::span<const std::pair<int, int>> pairs;
  std::span<const size_t> send_counts;  // all_to_all_v
  std::span<const size_t> recv_counts;
  std::span<const std::vector<ConstSegment>> send_segments;  // all_to_all_segments
  std::span<const std::vector<MutableSegment>> recv_segments;
};

}  // namespace spmd
