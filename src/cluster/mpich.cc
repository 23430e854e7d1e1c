// MPICH's Hydra (mpiexec / mpiexec.hydra) and other PMI-1 launchers.
//
// Present when PMI_RANK and PMI_SIZE are set. Processes: PMI_SIZE, PMI_RANK, MPI_LOCALRANKID.
// Coordinator: Hydra names no host, so rank 0 publishes its own hostname (or
// SPMD_COORDINATOR_HOST) and a free port (or SPMD_COORDINATOR_PORT) in the launcher's key-value
// space over PMI_FD, the launcher's barrier passes, and every rank reads it back. This works
// wherever rank 0 runs; JAX assumes 127.0.0.1 here. A program that also initialises MPICH's MPI
// should call initialize() after MPI_Init or give the address explicitly, because both speak PMI
// over the same socket.
#include <fmt/format.h>

#include "cluster/cluster_env.h"
#include "cluster/pmi1_client.h"
#include "cluster/published_address.h"
#include "spmd/error.h"

namespace spmd {
namespace {

class MpichEnv : public ClusterEnv {
 public:
  explicit MpichEnv(EnvReader env) : env_(std::move(env)) {}

  std::string name() const override { return "mpich"; }
  std::vector<std::string> marker_variables() const override { return {"PMI_RANK", "PMI_SIZE"}; }
  bool is_present() const override { return env_.has("PMI_RANK") && env_.has("PMI_SIZE"); }

  std::optional<std::string> coordinator_address(std::chrono::milliseconds timeout) const override {
    const auto fd = env_.get_int("PMI_FD", 0, kMaxInt);
    if (!fd) {
      throw InvalidArgument(
          "PMI_RANK and PMI_SIZE are set but PMI_FD is not, so there is no PMI-1 launcher socket "
          "to agree on the coordinator through; give coordinator_address explicitly");
    }
    Pmi1Client pmi(*fd, std::chrono::steady_clock::now() + timeout);
    const int rank = *process_id();
    return pmi.exchange_from_rank0(rank, "spmd_coordinator",
                                   rank == 0 ? address_to_publish(env_) : "");
  }
  std::optional<int> num_processes() const override { return env_.get_int("PMI_SIZE", 1, kMaxInt); }
  std::optional<int> process_id() const override { return env_.get_int("PMI_RANK", 0, kMaxInt); }
  std::optional<int> local_process_id() const override {
    return env_.get_int("MPI_LOCALRANKID", 0, kMaxInt);
  }

 private:
  EnvReader env_;
};

}  // namespace

std::unique_ptr<ClusterEnv> make_mpich_env(EnvReader env) {
  return std::make_unique<MpichEnv>(std::move(env));
}

}  // namespace spmd
