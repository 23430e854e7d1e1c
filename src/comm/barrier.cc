// barrier: an empty message to and from every peer process; the local participants meet in
// memory before (local_rendezvous). Returns once every participant has arrived.
#include "comm/call.h"

namespace spmd {

void run_barrier(Call& c) {
  for (int q = 0; q < c.layout.positions(); ++q) {
    if (q == c.layout.self) continue;
    c.ex.send(q, nullptr, 0);
    c.ex.recv_into(q, nullptr, 0);
  }
  c.ex.run();
}

}  // namespace spmd
