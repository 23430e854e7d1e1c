// permute (JAX's ppermute): for each (source, target) pair the source's buffer becomes the
// target's; participants that are no target get zeros. Every process first sends every peer an
// empty message (the call's check), then the buffers its ranks owe that peer's ranks, in pair
// order. Inputs are copied aside when some local output overlaps some local input.
#include <cstring>

#include "comm/call.h"

namespace spmd {

void run_permute(Call& c) {
  const GroupLayout& g = c.layout;
  const size_t bytes = c.bytes();
  const size_t L = c.local.size();
  std::vector<int> local_index(g.size(), -1);
  for (size_t i = 0; i < L; ++i) local_index[g.local_ranks[i]] = static_cast<int>(i);

  const std::vector<const std::byte*> in = unaliased_inputs(c, bytes);
  std::vector<bool> targeted(L, false);
  for (const auto& [s, t] : c.pairs) {
    if (local_index[t] >= 0) targeted[local_index[t]] = true;
  }
  for (size_t i = 0; i < L; ++i) {
    if (!targeted[i]) std::memset(c.local[i].out, 0, bytes);
  }
  for (int q = 0; q < g.positions(); ++q) {
    if (q == g.self) continue;
    c.ex.send(q, nullptr, 0);
    c.ex.recv_into(q, nullptr, 0);
  }
  for (const auto& [s, t] : c.pairs) {
    const int ps = g.rank_position[s];
    const int pt = g.rank_position[t];
    if (ps == g.self && pt == g.self) {
      std::memcpy(c.local[local_index[t]].out, in[local_index[s]], bytes);
    } else if (ps == g.self) {
      c.ex.send(pt, in[local_index[s]], bytes);
    } else if (pt == g.self) {
      c.ex.recv_into(ps, c.local[local_index[t]].out, bytes);
    }
  }
  c.ex.run();
}

}  // namespace spmd
