// spmd-bench coordinator-clients (internal): one helper process of the simulated cluster. It runs
// the clients of process ids [first, first + count) — real CoordClients, the code initialize()
// uses, over real TCP — on a few threads, and obeys commands on stdin, one per line:
//
//   <id> start                        register every client; "<id> done <t_ns> <failures>" once
//                                     all hold the topology (t_ns: when the last one did)
//   <id> barrier <first> <count>      processes in that range (and here) arrive at barrier
//                                     "bench"; "<id> done <t_ns> <failures>" when all are released
//   <id> kv                           each sets a key, then waits for its neighbour's: "done …"
//   <id> shutdown <first> <count>     the shutdown barrier for that range: "done …"
//   <id> wait-heard <n> <timeout_ms>  waits until n clients heard of a failure:
//                                     "<id> heard <clients> <t_ns of the last> <service_lost>"
//   <id> floor-connect <port>         opens the TCP fan-out receivers (tcp_fanout.h): "<id> ok"
//   <id> floor-wait <round>           "<id> t <t_ns>" when every receiver has that round
//   <id> floor-close                  "<id> ok"
//   <id> rtt <count> <gap_ms>         this helper's first client asks the service for a missing
//                                     key `count` times, `gap_ms` apart: "<id> rtt <p50_ms>
//                                     <p99_ms> <max_ms>"
//   <id> close                        disconnects every client: "<id> ok"
//   <id> quit                         exits 0
//
// Answers may come in another order than the commands (a barrier answers when it completes), so
// each repeats its command's id. Times are CLOCK_MONOTONIC ns, comparable across the processes.
// The tests drive the same helpers (tests/coord/mass_failure_test.cc).
#pragma once

#include <cstdint>
#include <string>

namespace spmd::bench {

struct SimClientsOptions {
  std::string address;  // the service, "127.0.0.1:port"
  int num_processes = 1;
  int first = 0;  // this helper's first process id
  int count = 1;  // and how many it runs
  int heartbeat_timeout_ms = 100000;
  int threads = 1;
};

// Runs until `quit` or the end of stdin; returns the process exit code.
int run_sim_clients(const SimClientsOptions& options);

// The simulated cluster's hosts hold kSimProcessesPerHost processes each, with pids as a
// launcher hands them out: nearby on one host, unrelated across hosts. This gives the topology
// its realistic size.
inline constexpr int kSimProcessesPerHost = 8;
std::string sim_host_id(int process);
int64_t sim_pid(int process);

}  // namespace spmd::bench
