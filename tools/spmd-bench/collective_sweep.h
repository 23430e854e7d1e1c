// The measurement loop every implementation runs in `spmd-bench collectives` (spmd, Open MPI,
// Gloo), so that their rows differ only in the library doing the work.
//
// Per op and size: warm-up calls, then timed calls, each timed on its own (p50 and p99 over the
// calls of rank 0); the result of the last call is checked against the known answer. Buffers of
// 64 KiB and more rotate through a pool of at least 64 MiB (twice this machine's L3), so each
// call reads memory no earlier call left in cache; smaller ones are reused, as applications
// reuse small buffers. Rank 0 prints one JSON object per row on stdout.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace spmd::bench {

// One collective library seen by the sweep. `count` is elements (float32) per participant as
// spmd counts them: all_reduce/broadcast in = out = count; all_gather in count, out count*size;
// reduce_scatter in count*size, out count; all_to_all in = out = count*size. broadcast runs in
// place on `out`, from rank 0.
class CollectiveImpl {
 public:
  virtual ~CollectiveImpl() = default;
  virtual int rank() = 0;
  virtual int size() = 0;
  virtual const char* name() = 0;       // "spmd", "mpi", "gloo"
  virtual std::string transport() = 0;  // "shm", "tcp", "vader", …
  virtual bool supports(const std::string& op) = 0;
  virtual void run(const std::string& op, const float* in, float* out, size_t count) = 0;
  virtual void barrier() = 0;
  // Every rank's flag and-ed (for the correctness column).
  virtual bool all_true(bool mine) = 0;
  // Memory for `count` floats of a point's buffer, and its release: ordinary memory unless the
  // library offers memory of its own for communication (spmd's comm memory).
  virtual float* allocate(size_t count) { return new float[count]; }
  virtual void deallocate(float* p, size_t count) { delete[] p; }
};

// How many buffers of `bytes` a point rotates through: enough for 64 MiB from 64 KiB on, else
// one. The references (memcpy, the exchange) rotate theirs alike.
size_t rotating_buffers(size_t bytes);

struct SweepOptions {
  std::vector<std::string> ops;
  std::vector<size_t> sizes;  // bytes, as nccl-tests counts them (the larger buffer of the op)
  double seconds_per_point = 0.3;
  int max_iterations = 2000;
  int min_iterations = 5;
};

void sweep(CollectiveImpl& impl, const SweepOptions& options);

// Parses "8,1K,1M,64M" (K, M, G = powers of 1024).
std::vector<size_t> parse_sizes(const std::string& list);
std::vector<std::string> parse_list(const std::string& list);

// The defaults: 8 B to 256 MiB in powers of 4, plus 1 MiB and 64 MiB; every op.
std::vector<size_t> default_sizes();
std::vector<std::string> default_ops();

}  // namespace spmd::bench
