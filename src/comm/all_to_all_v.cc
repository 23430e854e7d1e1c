// all_to_all_v: like all_to_all, with a count per pair of ranks — what resharding moves
// between processes. One participant per process. Every peer gets a message, empty or not, so a
// mismatched call is caught everywhere, and each message's length is checked against the
// receiver's count.
#include <fmt/format.h>

#include <cstring>

#include "comm/call.h"
#include "spmd/error.h"

namespace spmd {

void run_all_to_all_v(Call& c) {
  const GroupLayout& g = c.layout;
  const size_t elem = c.elem();
  const int n = g.size();
  const int me = g.local_ranks.front();
  size_t send_at = 0;
  size_t recv_at = 0;
  for (int r = 0; r < n; ++r) {
    const size_t out_bytes = c.send_counts[r] * elem;
    const size_t in_bytes = c.recv_counts[r] * elem;
    if (r == me) {
      if (out_bytes != in_bytes) {
        throw InvalidArgument(
            fmt::format("all_to_all_v: rank {} sends itself {} elements but expects {}", me,
                        c.send_counts[r], c.recv_counts[r]));
      }
      std::memmove(c.local[0].out + recv_at, c.local[0].in + send_at, out_bytes);
    } else {
      c.ex.send(g.rank_position[r], c.local[0].in + send_at, out_bytes);
      c.ex.recv_into(g.rank_position[r], c.local[0].out + recv_at, in_bytes);
    }
    send_at += out_bytes;
    recv_at += in_bytes;
  }
  c.ex.run();
}

}  // namespace spmd
