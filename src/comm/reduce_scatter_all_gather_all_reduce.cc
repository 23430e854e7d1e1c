// Bandwidth-optimal all-reduce: a reduce-scatter (process p reduces block p of every process's
// contribution) followed by an all-gather of the reduced blocks. Each process sends and receives
// 2(P-1)/P of the buffer and reduces 1/P of it P-1 times — the same traffic as a ring, in two
// steps instead of 2(P-1), which suits the all-pairs links of shared memory and small clusters.
// Payloads stream through the engine, so a block is reduced piece by piece as it arrives and
// stays in cache between the transport's copy and the reduction.
#include <cstring>

#include "comm/call.h"
#include "comm/reduce_kernels.h"

namespace spmd {
namespace {

// Block b of P over `count` elements, balanced: [begin, end).
std::pair<size_t, size_t> block(size_t count, int P, int b) {
  const size_t base = count / P;
  const size_t extra = count % P;
  const size_t begin = b * base + std::min<size_t>(b, extra);
  return {begin, begin + base + (static_cast<size_t>(b) < extra ? 1 : 0)};
}

}  // namespace

void reduce_scatter_all_gather_all_reduce(Call& c, const std::byte* in, std::byte* out) {
  const GroupLayout& g = c.layout;
  const int P = g.positions();
  const size_t elem = c.elem();
  const size_t count = c.fp.count;
  const auto [mine_begin, mine_end] = block(count, P, g.self);
  const size_t mine_bytes = (mine_end - mine_begin) * elem;
  std::byte* my_out = out + mine_begin * elem;
  const std::byte* my_in = in + mine_begin * elem;

  // Reduce-scatter.
  for (int q = 0; q < P; ++q) {
    if (q == g.self) continue;
    const auto [b, e] = block(count, P, q);
    c.ex.send(q, in + b * elem, (e - b) * elem);
  }
  const DType dtype = c.dtype;
  const ReduceOp op = c.fp.reduce;
  if (P == 2) {
    auto sink = [my_in, my_out, dtype, op, elem](size_t offset, const std::byte* data, size_t n) {
      reduce_to(dtype, op, my_out + offset, my_in + offset, data, n / elem);
    };
    c.ex.recv(1 - g.self, mine_bytes, elem, sink);
    c.ex.run();
  } else {
    std::byte* theirs = c.scratch.get(1, mine_bytes * P);
    for (int q = 0; q < P; ++q) {
      if (q != g.self) c.ex.recv_into(q, theirs + q * mine_bytes, mine_bytes);
    }
    c.ex.run();
    std::memcpy(theirs + g.self * mine_bytes, my_in, mine_bytes);
    std::memcpy(my_out, theirs, mine_bytes);
    for (int q = 1; q < P; ++q) {
      reduce_into(dtype, op, my_out, theirs + q * mine_bytes, mine_end - mine_begin);
    }
  }

  // All-gather.
  for (int q = 0; q < P; ++q) {
    if (q == g.self) continue;
    c.ex.send(q, my_out, mine_bytes);
    const auto [b, e] = block(count, P, q);
    c.ex.recv_into(q, out + b * elem, (e - b) * elem);
  }
  c.ex.run();
}

}  // namespace spmd
