// spmd-bench data: the data loader reading a .npy file with shuffling across N processes, beside
// a plain sequential read of the same file by the same processes, in the same run.
#pragma once

#include <cstdint>
#include <string>

namespace spmd::bench {

struct DataBenchOptions {
  int processes = 2;
  int64_t records = 1 << 20;
  int64_t record_floats = 64;  // 256-byte records
  int64_t batch = 1024;        // global
  int iterations = 3;
  int prefetch = -1;  // the loader's default (auto)
  std::string dir;    // where the .npy goes; default: a new directory under /tmp
  bool json = false;
};

int run_data_bench(const DataBenchOptions& options);
int run_data_worker(const DataBenchOptions& options);

}  // namespace spmd::bench
