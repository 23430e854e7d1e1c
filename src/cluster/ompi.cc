// Open MPI: processes started by mpirun/mpiexec.
//
// Present when OMPI_COMM_WORLD_SIZE, OMPI_COMM_WORLD_RANK and OMPI_COMM_WORLD_LOCAL_RANK are set
// (every Open MPI launcher sets them), or OMPI_MCA_orte_hnp_uri (4.x).
//
// Coordinator:
// - Open MPI 4.x (ORTE): the launcher's first address in OMPI_MCA_orte_hnp_uri, port from the
//   job id ((id / 4096) % 4096 + 61440, or SPMD_COORDINATOR_PORT) — JAX's rule, so process 0 is
//   expected on mpirun's host, as mpirun places rank 0 by default.
// - Open MPI 5.x (PRRTE), where that variable is gone: rank 0 publishes its own hostname and a
//   free port through the launcher's PMIx server (PMIX_SERVER_URI*), and every rank reads it
//   back. This needs no assumption about where rank 0 runs, and JAX has no equivalent.
#include <fmt/format.h>

#include "cluster/cluster_env.h"
#include "cluster/ompi_uri.h"
#include "cluster/pmix_exchange.h"
#include "cluster/published_address.h"
#include "spmd/error.h"

namespace spmd {
namespace {

class OmpiEnv : public ClusterEnv {
 public:
  explicit OmpiEnv(EnvReader env) : env_(std::move(env)) {}

  std::string name() const override { return "ompi"; }
  std::vector<std::string> marker_variables() const override {
    return {"OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK",
            "OMPI_MCA_orte_hnp_uri"};
  }
  bool is_present() const override {
    return env_.has("OMPI_MCA_orte_hnp_uri") ||
           (env_.has("OMPI_COMM_WORLD_SIZE") && env_.has("OMPI_COMM_WORLD_RANK") &&
            env_.has("OMPI_COMM_WORLD_LOCAL_RANK"));
  }

  std::optional<std::string> coordinator_address(std::chrono::milliseconds timeout) const override {
    if (auto uri = env_.get("OMPI_MCA_orte_hnp_uri")) {
      const OrteUri parsed = parse_orte_uri(*uri);
      // The URI's number is ORTE's job id of mpirun itself: the job family in the upper 16 bits
      // and the local job number (0 for mpirun) in the lower 16, so its low 12 bits are always 0
      // ("[[24164,0],0]" is 1583611904 = 24164 << 16). Taken modulo 4096 as it is, every job
      // would get the same port; divided by 4096 first, the port follows the family's low bits
      // and two jobs on one host rarely collide. This is JAX's rule (ompi_cluster.py), so a JAX
      // process and an spmd process of the same job would name the same port.
      const int port = coordinator_port_for_job(parsed.job_id / 4096, env_);
      if (parsed.host.find(':') != std::string::npos) {
        return fmt::format("[{}]:{}", parsed.host, port);
      }
      return fmt::format("{}:{}", parsed.host, port);
    }
    if (!pmix_available()) {
      throw InvalidArgument(
          "Open MPI 5 detected (OMPI_COMM_WORLD_* set, no OMPI_MCA_orte_hnp_uri), but there is "
          "no PMIx server to agree on the coordinator through (no PMIX_SERVER_URI*, or this "
          "build lacks PMIx); give coordinator_address explicitly");
    }
    const int rank = *process_id();
    return pmix_exchange_from_rank0("spmd.coordinator_address",
                                    rank == 0 ? address_to_publish(env_) : "", timeout);
  }
  std::optional<int> num_processes() const override {
    return env_.require_int("OMPI_COMM_WORLD_SIZE", 1, kMaxInt, kContext);
  }
  std::optional<int> process_id() const override {
    return env_.require_int("OMPI_COMM_WORLD_RANK", 0, kMaxInt, kContext);
  }
  std::optional<int> local_process_id() const override {
    return env_.get_int("OMPI_COMM_WORLD_LOCAL_RANK", 0, kMaxInt);
  }

 private:
  static constexpr const char* kContext = "Open MPI's launcher variables are incomplete";

  EnvReader env_;
};

}  // namespace

std::unique_ptr<ClusterEnv> make_ompi_env(EnvReader env) {
  return std::make_unique<OmpiEnv>(std::move(env));
}

}  // namespace spmd
