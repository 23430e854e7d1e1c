// reduce_scatter: the local participants' inputs are combined in memory; every process then
// sends each peer the blocks that peer's ranks own and reduces what it receives in position
// order (streaming from the transport when there are two processes). float16/bfloat16 reduce
// in float32 and are rounded once.
#include <cstring>

#include "comm/call.h"
#include "comm/reduce_kernels.h"

namespace spmd {

void run_reduce_scatter(Call& c) {
  const GroupLayout& g = c.layout;
  const size_t count = c.fp.count;
  const bool widen = accumulates_in_float32(c.fp.dtype);
  const size_t bytes = c.bytes();
  const size_t elem = c.elem();
  const size_t L = c.local.size();
  const int P = g.positions();
  const size_t all = count * g.size();

  const std::byte* contrib = c.local[0].in;
  if (widen) {
    auto* acc = reinterpret_cast<float*>(c.scratch.get(ScratchRole::kWidened, all * elem));
    widen_to_float32(c.fp.dtype, c.local[0].in, acc, all);
    for (size_t i = 1; i < L; ++i)
      reduce_into_float32(c.fp.dtype, c.fp.reduce, acc, c.local[i].in, all);
    contrib = reinterpret_cast<std::byte*>(acc);
  } else if (L > 1) {
    std::byte* acc = c.scratch.get(ScratchRole::kWidened, all * elem);
    std::memcpy(acc, c.local[0].in, all * elem);
    for (size_t i = 1; i < L; ++i) reduce_into(c.dtype, c.fp.reduce, acc, c.local[i].in, all);
    contrib = acc;
  }

  // results[i]: local rank i's block, reduced over every process.
  std::byte* results = c.scratch.get(ScratchRole::kWidenedResult, L * bytes);
  for (size_t i = 0; i < L; ++i) {
    std::memcpy(results + i * bytes, contrib + g.local_ranks[i] * bytes, bytes);
  }
  for (int q = 0; q < P; ++q) {
    if (q == g.self) continue;
    for (int r : g.ranks_of[q]) c.ex.send(q, contrib + r * bytes, bytes);
  }
  const DType dtype = c.dtype;
  const ReduceOp op = c.fp.reduce;
  if (P == 2) {
    const int q = 1 - g.self;
    // Sinks must outlive run(): one per local rank, kept in a vector sized up front.
    struct Into {
      std::byte* dst;
      DType dtype;
      ReduceOp op;
      size_t elem;
      void operator()(size_t offset, const std::byte* data, size_t n) const {
        reduce_into(dtype, op, dst + offset, data, n / elem);
      }
    };
    std::vector<Into> sinks;
    sinks.reserve(L);
    for (size_t i = 0; i < L; ++i) {
      sinks.push_back({results + i * bytes, dtype, op, elem});
      c.ex.recv(q, bytes, elem, sinks.back());
    }
    c.ex.run();
  } else if (P > 2) {
    std::byte* theirs =
        c.scratch.get(ScratchRole::kReduceScatterPeers, static_cast<size_t>(P) * L * bytes);
    for (int q = 0; q < P; ++q) {
      if (q == g.self) continue;
      for (size_t i = 0; i < L; ++i) c.ex.recv_into(q, theirs + (q * L + i) * bytes, bytes);
    }
    c.ex.run();
    for (size_t i = 0; i < L; ++i) {
      std::memcpy(theirs + (g.self * L + i) * bytes, results + i * bytes, bytes);
      std::byte* r = results + i * bytes;
      std::memcpy(r, theirs + i * bytes, bytes);
      for (int q = 1; q < P; ++q) reduce_into(dtype, op, r, theirs + (q * L + i) * bytes, count);
    }
  }
  for (size_t i = 0; i < L; ++i) {
    if (widen) {
      narrow_from_float32(c.fp.dtype, reinterpret_cast<const float*>(results + i * bytes),
                          c.local[i].out, count);
    } else {
      std::memcpy(c.local[i].out, results + i * bytes, bytes);
    }
  }
}

}  // namespace spmd
