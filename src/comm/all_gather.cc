// all_gather: every process sends its local participants' blocks to every other process (the
// same bytes a ring moves, in one step), straight into the receivers' output buffers when the
// group's ranks are grouped by process, through a staging buffer otherwise.
#include <cstring>

#include "comm/call.h"

namespace spmd {
namespace {

// True when each process's ranks are consecutive and processes appear in rank order, so that
// position-major order is rank order.
bool ranks_grouped_by_process(const GroupLayout& g) {
  int next = 0;
  for (const auto& ranks : g.ranks_of) {
    for (int r : ranks) {
      if (r != next++) return false;
    }
  }
  return true;
}

}  // namespace

void run_all_gather(Call& c) {
  const GroupLayout& g = c.layout;
  const size_t bytes = c.bytes();
  const int P = g.positions();
  const size_t total = bytes * g.size();
  const bool direct = ranks_grouped_by_process(g);
  // Where the gathered result is assembled, in rank order.
  std::byte* result = direct ? c.local[0].out : c.scratch.get(ScratchRole::kAlgorithm, total);
  for (size_t i = 0; i < c.local.size(); ++i) {
    std::byte* dst = result + g.local_ranks[i] * bytes;
    if (dst != c.local[i].in) std::memmove(dst, c.local[i].in, bytes);
  }
  for (int q = 0; q < P; ++q) {
    if (q == g.self) continue;
    if (direct) {
      c.ex.send(q, result + g.local_ranks.front() * bytes, g.local_ranks.size() * bytes);
      c.ex.recv_into(q, result + g.ranks_of[q].front() * bytes, g.ranks_of[q].size() * bytes);
    } else {
      for (int r : g.local_ranks) c.ex.send(q, result + r * bytes, bytes);
      for (int r : g.ranks_of[q]) c.ex.recv_into(q, result + r * bytes, bytes);
    }
  }
  c.ex.run();
  for (size_t i = 0; i < c.local.size(); ++i) {
    if (c.local[i].out != result) std::memcpy(c.local[i].out, result, total);
  }
}

}  // namespace spmd
