// spmd-bench strangers: a running job's step rate while a stranger floods its coordination
// service's port with connections, beside the same job with a CPU hog of the same size (a thread
// that spins for the share of a core the flood's thread used) and the job alone, in one run
// (issue 56: the flood should cost no more than the hog, >= 0.8x its rate). A step is one
// all_reduce of 64 floats across the processes, the smallest step a job takes; nothing in it asks
// the service, so what the flood costs is the CPU the service spends refusing it.
#pragma once

namespace spmd::bench {

struct StrangersBenchOptions {
  int processes = 3;
  double seconds = 3;  // of steps per job
  int rounds = 3;      // each condition once per round, in turn
  int held = 300;      // connections the flood holds open at once (more than the service's room)
  bool json = false;
};

int run_strangers_bench(const StrangersBenchOptions& options);
// One process of the job: steps for `seconds` as process 0 counts them; process 0 prints the row.
int run_strangers_worker(const StrangersBenchOptions& options);

}  // namespace spmd::bench
