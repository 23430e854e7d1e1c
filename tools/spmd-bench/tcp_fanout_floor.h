// The physical reference for the coordinator benchmark: the time one thread takes to send one
// small message on each of N loopback TCP connections while another thread receives them all
// (epoll, non-blocking recv). No spmd code runs, so a barrier's release on this machine cannot
// be faster than this.
#pragma once

namespace spmd::bench {

// p50 over `rounds` fan-outs to `connections` connections, in milliseconds; negative when the
// connections cannot be set up (the reason is printed).
double tcp_fanout_floor_ms(int connections, int rounds);

}  // namespace spmd::bench
