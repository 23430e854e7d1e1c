// Bandwidth-optimal all-reduce: a reduce-scatter (process p reduces block p of every process's
// contribution) followed by an all-gather of the reduced blocks. Each process sends and receives
// 2(P-1)/P of the buffer and reduces 1/P of it P-1 times — a ring's traffic, in two steps instead
// of 2(P-1), which suits the all-pairs links of shared memory and small clusters.
//
// With an epilogue (all_reduce_then), each process applies it to its reduced block of a chunk
// before the all-gather sends the block on, so the epilogue runs on 1/P of the elements here.
//
// Chunked and pipelined: the buffer goes in chunks, and one step of the engine carries the
// reduce-scatter of chunk k together with the all-gather of chunk k-1, so a reduced block is sent
// on while it is still in cache and both directions of every link stay busy. Payloads stream
// through the engine, so a block is reduced piece by piece as it arrives.
#include <algorithm>
#include <cstring>

#include "comm/call.h"
#include "comm/reduce_kernels.h"
#include "comm/streaming_store.h"

namespace spmd {
namespace {

// Bytes of the buffer per pipeline chunk: the reduced blocks of a chunk (chunk / P each) stay in
// the L2 cache until the all-gather sends them, and a step's synchronisation stays small beside
// the time to move a chunk.
constexpr size_t kChunkBytes = size_t{1} << 20;

// Two processes: each block is written once here and read next by the peer (or, at this size,
// by this process much later), so it goes straight to memory (streaming_store.h). Also when an
// epilogue reads it next: with ordinary stores, to keep the block in cache for it, a 16 MiB
// psum_then alone ran 3.9 -> 3.75 ms, but the data-parallel MLP step on 2 x 1 went 55 -> 62 ms.
struct ReduceSink {
  const std::byte* mine;
  std::byte* out;
  DType dtype;
  ReduceOp op;
  size_t elem;
  void operator()(size_t offset, const std::byte* data, size_t n) const {
    reduce_to_streaming(dtype, op, out + offset, mine + offset, data, n / elem);
  }
};

}  // namespace

void reduce_scatter_all_gather_all_reduce(Call& c, Members m, const std::byte* in, std::byte* out,
                                          const AllReduceEpilogue* then) {
  const int P = m.size();
  const size_t elem = c.elem();
  const size_t count = c.fp.count;
  const DType dtype = c.dtype;
  const ReduceOp op = c.fp.reduce;
  const size_t chunk = std::max<size_t>(kChunkBytes / elem, static_cast<size_t>(P));
  const size_t chunks = (count + chunk - 1) / chunk;
  auto chunk_range = [&](size_t k) {
    const size_t begin = k * chunk;
    return std::pair<size_t, size_t>{begin, std::min(count, begin + chunk) - begin};
  };
  // P > 2: each peer's contribution to my block lands here, then is reduced in position order.
  std::byte* theirs =
      P > 2 ? c.scratch.get(ScratchRole::kAlgorithm, (chunk / P + 1) * elem * P) : nullptr;
  ReduceSink sink{};

  for (size_t step = 0; step <= chunks; ++step) {
    const bool scatter = step < chunks;  // reduce-scatter of chunk `step`
    const bool gather = step > 0;        // all-gather of chunk `step - 1`
    size_t mine_first = 0;
    size_t mine_bytes = 0;
    if (scatter) {
      const auto [begin, n] = chunk_range(step);
      const auto [first, last] = balanced_block(begin, n, P, m.me);
      mine_first = first;
      mine_bytes = (last - first) * elem;
    }
    size_t done_first = 0;
    size_t done_bytes = 0;
    if (gather) {
      const auto [begin, n] = chunk_range(step - 1);
      const auto [first, last] = balanced_block(begin, n, P, m.me);
      done_first = first;
      done_bytes = (last - first) * elem;
    }
    for (int q = 0; q < P; ++q) {
      if (q == m.me) continue;
      const int peer = m.positions[q];
      if (scatter) {
        const auto [begin, n] = chunk_range(step);
        const auto [first, last] = balanced_block(begin, n, P, q);
        c.ex.send(peer, in + first * elem, (last - first) * elem);
        if (P == 2) {
          sink = {in + mine_first * elem, out + mine_first * elem, dtype, op, elem};
          c.ex.recv(peer, mine_bytes, elem, sink);
        } else {
          c.ex.recv_into(peer, theirs + q * mine_bytes, mine_bytes);
        }
      }
      if (gather) {
        c.ex.send(peer, out + done_first * elem, done_bytes);
        const auto [begin, n] = chunk_range(step - 1);
        const auto [first, last] = balanced_block(begin, n, P, q);
        c.ex.recv_into(peer, out + first * elem, (last - first) * elem);
      }
    }
    c.ex.run();
    if (scatter && P > 2) {
      // Position order, so every process computes bit-identical sums.
      std::memcpy(theirs + m.me * mine_bytes, in + mine_first * elem, mine_bytes);
      std::byte* dst = out + mine_first * elem;
      std::memcpy(dst, theirs, mine_bytes);
      for (int q = 1; q < P; ++q) {
        reduce_into(dtype, op, dst, theirs + q * mine_bytes, mine_bytes / elem);
      }
    }
    // The epilogue on this process's reduced block, before the next step gathers it.
    if (scatter && then != nullptr) {
      apply_in_place(*then, out + mine_first * elem, mine_first, mine_bytes / elem, elem);
    }
  }
}

}  // namespace spmd
