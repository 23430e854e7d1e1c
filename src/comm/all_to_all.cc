// all_to_all: block j of participant r's input becomes block r of participant j's output. Each
// process sends each peer, in one message per (sender, receiver) pair of ranks, exactly the
// blocks it owes; local pairs copy in memory. Inputs that overlap an output are copied aside
// first, so in-place calls work.
#include <cstring>

#include "comm/call.h"

namespace spmd {

void run_all_to_all(Call& c) {
  const GroupLayout& g = c.layout;
  const size_t bytes = c.bytes();
  const size_t total = bytes * g.size();
  const size_t L = c.local.size();
  const std::vector<const std::byte*> in = unaliased_inputs(c, total);
  for (int q = 0; q < g.positions(); ++q) {
    if (q == g.self) continue;
    for (size_t i = 0; i < L; ++i) {
      for (int j : g.ranks_of[q]) c.ex.send(q, in[i] + j * bytes, bytes);
    }
    for (int s : g.ranks_of[q]) {
      for (size_t i = 0; i < L; ++i) c.ex.recv_into(q, c.local[i].out + s * bytes, bytes);
    }
  }
  for (size_t i = 0; i < L; ++i) {
    for (size_t j = 0; j < L; ++j) {
      std::memcpy(c.local[j].out + g.local_ranks[i] * bytes, in[i] + g.local_ranks[j] * bytes,
                  bytes);
    }
  }
  c.ex.run();
}

}  // namespace spmd
