// Hierarchical all-reduce for groups that span hosts: each host's processes reduce into the
// host's first process (its leader) through shared memory, the leaders all-reduce across hosts,
// and each leader hands the result back within its host. Only the leaders' traffic crosses the
// network, once per host rather than once per process.
//
// Non-leaders talk only to their leader, so a mismatched call is seen first by a leader. A
// leader that sees one forwards it — to its host's processes and to the other leaders, which
// forward it within their hosts — so every participant still throws CollectiveMismatch naming
// the process whose call differs.
#include <cstring>
#include <map>
#include <string>

#include "comm/call.h"
#include "comm/reduce_kernels.h"
#include "spmd/error.h"

namespace spmd {
namespace {

struct Hosts {
  std::vector<int> mine;     // this host's positions, ascending; mine[0] leads
  std::vector<int> leaders;  // every host's leader, ascending
  int my_leader_index = -1;  // in leaders, when this process leads
};

Hosts hosts_of(const GroupLayout& g) {
  std::map<std::string, std::vector<int>> by_host;
  for (int p = 0; p < g.positions(); ++p) by_host[g.hosts[p]].push_back(p);
  Hosts h;
  h.mine = by_host[g.hosts[g.self]];
  for (const auto& [host, positions] : by_host) h.leaders.push_back(positions.front());
  std::sort(h.leaders.begin(), h.leaders.end());
  for (size_t i = 0; i < h.leaders.size(); ++i) {
    if (h.leaders[i] == g.self) h.my_leader_index = static_cast<int>(i);
  }
  return h;
}

}  // namespace

bool spans_hosts_with_neighbours(const GroupLayout& g) {
  std::map<std::string, int> count;
  for (const std::string& host : g.hosts) ++count[host];
  if (count.size() < 2) return false;
  for (const auto& [host, n] : count) {
    if (n > 1) return true;
  }
  return false;
}

void hierarchical_all_reduce(Call& c, const std::byte* in, std::byte* out) {
  const GroupLayout& g = c.layout;
  const Hosts h = hosts_of(g);
  const size_t bytes = c.bytes();
  const int leader = h.mine.front();

  if (g.self != leader) {
    // The contribution goes up; the result (or a forwarded mismatch) comes back.
    c.ex.send(leader, in, bytes);
    c.ex.recv_into(leader, out, bytes);
    c.ex.run();
    return;
  }

  const std::vector<int> followers(h.mine.begin() + 1, h.mine.end());
  std::vector<int> others;  // other leaders
  for (int p : h.leaders) {
    if (p != g.self) others.push_back(p);
  }
  try {
    // Within the host, in position order: the leader first.
    const std::byte* partial = in;
    if (!followers.empty()) {
      std::byte* theirs = c.scratch.get(ScratchRole::kHostFollowers, bytes * followers.size());
      for (size_t i = 0; i < followers.size(); ++i) {
        c.ex.recv_into(followers[i], theirs + i * bytes, bytes);
      }
      c.ex.run();
      std::byte* acc = c.scratch.get(ScratchRole::kHostSum, bytes);
      std::memcpy(acc, in, bytes);
      for (size_t i = 0; i < followers.size(); ++i) {
        reduce_into(c.dtype, c.fp.reduce, acc, theirs + i * bytes, c.fp.count);
      }
      partial = acc;
    }
    // Across hosts.
    const Members leaders{h.leaders, h.my_leader_index};
    if (bytes <= kOneShotAllReduceMax || c.fp.count < h.leaders.size()) {
      one_shot_all_reduce(c, leaders, partial, out);
    } else {
      reduce_scatter_all_gather_all_reduce(c, leaders, partial, out);
    }
  } catch (const CollectiveMismatch&) {
    const Exchange::Mismatch& m = c.ex.last_mismatch();
    std::vector<int> tell = followers;
    tell.insert(tell.end(), others.begin(), others.end());
    c.ex.forward_mismatch(tell, m.call, m.process);
    throw;
  }
  for (int p : followers) c.ex.send(p, out, bytes);
  c.ex.run();
}

}  // namespace spmd
