// spmd-bench-mpi OPS SIZES [SECONDS]: one rank of the Open MPI baseline, started by mpirun.
#include <mpi.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "spmd-bench/collective_sweep.h"

namespace {

class MpiImpl final : public spmd::bench::CollectiveImpl {
 public:
  MpiImpl() {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    const char* t = std::getenv("SPMD_BENCH_MPI_TRANSPORT");
    transport_ = t != nullptr ? t : "vader";
  }
  int rank() override { return rank_; }
  int size() override { return size_; }
  const char* name() override { return "mpi"; }
  std::string transport() override { return transport_; }
  bool supports(const std::string&) override { return true; }
  void run(const std::string& op, const float* in, float* out, size_t count) override {
    const int c = static_cast<int>(count);
    if (op == "all_reduce") {
      MPI_Allreduce(in, out, c, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    } else if (op == "all_gather") {
      MPI_Allgather(in, c, MPI_FLOAT, out, c, MPI_FLOAT, MPI_COMM_WORLD);
    } else if (op == "reduce_scatter") {
      MPI_Reduce_scatter_block(in, out, c, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    } else if (op == "all_to_all") {
      MPI_Alltoall(in, c, MPI_FLOAT, out, c, MPI_FLOAT, MPI_COMM_WORLD);
    } else if (op == "broadcast") {
      MPI_Bcast(out, c, MPI_FLOAT, 0, MPI_COMM_WORLD);
    }
  }
  void barrier() override { MPI_Barrier(MPI_COMM_WORLD); }
  bool all_true(bool mine) override {
    int v = mine ? 1 : 0;
    int all = 0;
    MPI_Allreduce(&v, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    return all != 0;
  }

 private:
  int rank_ = 0;
  int size_ = 1;
  std::string transport_;
};

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  if (argc < 3) {
    std::fprintf(stderr, "usage: spmd-bench-mpi OPS SIZES [SECONDS]\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  {
    MpiImpl impl;
    spmd::bench::SweepOptions options;
    options.ops = spmd::bench::parse_list(argv[1]);
    options.sizes = spmd::bench::parse_sizes(argv[2]);
    if (argc > 3) options.seconds_per_point = std::stod(argv[3]);
    spmd::bench::sweep(impl, options);
  }
  MPI_Finalize();
  return 0;
}
