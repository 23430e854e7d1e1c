// all_to_all_v: like all_to_all, with a count per pair of ranks — what resharding moves
// between processes. One participant per process. Every peer gets a message, empty or not, so a
// mismatched call is caught everywhere, and each message's length is checked against the
// receiver's count.
#include <fmt/format.h>

#include <cstring>

#include "comm/call.h"
#include "spmd/error.h"

namespace spmd {

namespace {

void run_segments(Call& c) {
  const GroupLayout& g = c.layout;
  const int me = g.local_ranks.front();
  for (int r = 0; r < g.size(); ++r) {
    const auto& out = c.send_segments[r];
    const auto& in = c.recv_segments[r];
    if (r == me) {
      if (out.size() != in.size()) {
        throw InvalidArgument(
            fmt::format("all_to_all_segments: rank {} sends itself {} pieces but expects {}", me,
                        out.size(), in.size()));
      }
      for (size_t i = 0; i < out.size(); ++i) {
        if (out[i].bytes != in[i].bytes) {
          throw InvalidArgument(fmt::format(
              "all_to_all_segments: rank {}'s piece {} to itself is {} bytes, expected {}", me, i,
              out[i].bytes, in[i].bytes));
        }
        std::memmove(in[i].data, out[i].data, out[i].bytes);
      }
      continue;
    }
    // An empty message first, so that every peer hears from every other even with no pieces.
    c.ex.send(g.rank_position[r], nullptr, 0);
    c.ex.recv_into(g.rank_position[r], nullptr, 0);
    for (const ConstSegment& s : out) c.ex.send(g.rank_position[r], s.data, s.bytes);
    for (const MutableSegment& s : in) c.ex.recv_into(g.rank_position[r], s.data, s.bytes);
  }
  c.ex.run();
}

}  // namespace

void run_all_to_all_v(Call& c) {
  if (!c.send_segments.empty()) {
    run_segments(c);
    return;
  }
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
