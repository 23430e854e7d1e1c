// broadcast: the root's process sends the root's buffer to every other process; the others send
// every peer an empty message, which is how a mismatched call (another root, count or op) is
// caught in every participant. Local participants get the result by copy.
#include <cstring>

#include "comm/call.h"

namespace spmd {

void run_broadcast(Call& c) {
  const GroupLayout& g = c.layout;
  const size_t bytes = c.bytes();
  const int root_position = g.rank_position[c.fp.root];
  const std::byte* source = nullptr;
  if (root_position == g.self) {
    for (size_t i = 0; i < c.local.size(); ++i) {
      if (g.local_ranks[i] == c.fp.root) source = c.local[i].in;
    }
  }
  for (int q = 0; q < g.positions(); ++q) {
    if (q == g.self) continue;
    c.ex.send(q, source, source != nullptr ? bytes : 0);
    if (q == root_position) {
      c.ex.recv_into(q, c.local[0].out, bytes);
    } else {
      c.ex.recv_into(q, nullptr, 0);
    }
  }
  c.ex.run();
  if (source == nullptr) source = c.local[0].out;
  for (size_t i = 0; i < c.local.size(); ++i) {
    if (c.local[i].out != source) std::memmove(c.local[i].out, source, bytes);
  }
}

}  // namespace spmd
