// What every algorithm of a call shares (call.h): the dispatch to the op's algorithm, the dtype
// on the wire, inputs apart from outputs.
#include "comm/call.h"

#include <cstring>

#include "comm/reduce_kernels.h"

namespace spmd {

DType wire_dtype(const Fingerprint& fp) {
  const bool reduces = fp.op == CollectiveOp::kAllReduce || fp.op == CollectiveOp::kReduceScatter;
  return reduces && accumulates_in_float32(fp.dtype) ? DType::kFloat32 : fp.dtype;
}

std::vector<const std::byte*> unaliased_inputs(Call& c, size_t bytes) {
  const size_t L = c.local.size();
  std::vector<const std::byte*> in(L);
  bool overlap = false;
  for (size_t i = 0; i < L; ++i) {
    for (size_t j = 0; j < L; ++j) {
      const std::byte* a = c.local[i].in;
      const std::byte* b = c.local[j].out;
      overlap |= a < b + bytes && b < a + bytes;
    }
  }
  if (!overlap || bytes == 0) {
    for (size_t i = 0; i < L; ++i) in[i] = c.local[i].in;
    return in;
  }
  std::byte* copy = c.scratch.get(ScratchRole::kAlgorithm, L * bytes);
  for (size_t i = 0; i < L; ++i) {
    std::memcpy(copy + i * bytes, c.local[i].in, bytes);
    in[i] = copy + i * bytes;
  }
  return in;
}

void run_call(Call& c) {
  switch (c.fp.op) {
    case CollectiveOp::kAllReduce:
      return run_all_reduce(c);
    case CollectiveOp::kAllGather:
      return run_all_gather(c);
    case CollectiveOp::kReduceScatter:
      return run_reduce_scatter(c);
    case CollectiveOp::kAllToAll:
      return run_all_to_all(c);
    case CollectiveOp::kBroadcast:
      return run_broadcast(c);
    case CollectiveOp::kPermute:
      return run_permute(c);
    case CollectiveOp::kBarrier:
      return run_barrier(c);
    case CollectiveOp::kAllToAllV:
      return run_all_to_all_v(c);
    case CollectiveOp::kSendRecv:
      return;  // point to point runs through ProcessGroup::send/recv, not as a call
  }
}

}  // namespace spmd
