// Slurm: processes started by srun (also inside sbatch scripts).
//
// Present when SLURM_JOB_ID is set. Inherited (so passed over by automatic detection) when
// another launcher started this very process inside the allocation: mpirun's tasks inherit the
// batch step's SLURM_* variables (with SLURM_PROCID 0 for every one of them), so
// OMPI_COMM_WORLD_RANK, or a PMI_RANK that differs from SLURM_PROCID, means the process belongs
// to that launcher instead.
//
// Coordinator: the first host of SLURM_STEP_NODELIST, port SLURM_JOB_ID % 4096 + 61440 (or
// SPMD_COORDINATOR_PORT). Processes: SLURM_NTASKS, SLURM_PROCID, SLURM_LOCALID. Local devices:
// all (CPU devices are not one per task).
#include <fmt/format.h>

#include "cluster/cluster_env.h"
#include "cluster/slurm_nodelist.h"
#include "spmd/error.h"

namespace spmd {
namespace {

class SlurmEnv : public ClusterEnv {
 public:
  explicit SlurmEnv(EnvReader env) : env_(std::move(env)) {}

  std::string name() const override { return "slurm"; }
  std::vector<std::string> marker_variables() const override { return {"SLURM_JOB_ID"}; }

  bool is_present() const override { return env_.has("SLURM_JOB_ID"); }
  bool inherited() const override {
    if (env_.has("OMPI_COMM_WORLD_RANK")) return true;
    auto pmi_rank = env_.get("PMI_RANK");
    return pmi_rank && *pmi_rank != env_.get("SLURM_PROCID").value_or("");
  }

  std::optional<std::string> coordinator_address(std::chrono::milliseconds) const override {
    const auto nodes = env_.get("SLURM_STEP_NODELIST");
    if (!nodes) {
      throw InvalidArgument(
          "SLURM_JOB_ID is set but SLURM_STEP_NODELIST is not: start the program with srun (also "
          "inside an sbatch script), or give coordinator_address explicitly");
    }
    const std::string host = first_slurm_host(*nodes, "SLURM_STEP_NODELIST");
    const auto job = env_.get("SLURM_JOB_ID");
    uint64_t job_id = 0;
    try {
      job_id = static_cast<uint64_t>(std::stoull(*job));
    } catch (const std::exception&) {
      throw InvalidArgument(fmt::format("SLURM_JOB_ID='{}' is not a job number", *job));
    }
    return fmt::format("{}:{}", host, coordinator_port_for_job(job_id, env_));
  }
  std::optional<int> num_processes() const override {
    return env_.require_int("SLURM_NTASKS", 1, kMaxInt, kContext);
  }
  std::optional<int> process_id() const override {
    return env_.require_int("SLURM_PROCID", 0, kMaxInt, kContext);
  }
  std::optional<int> local_process_id() const override {
    return env_.get_int("SLURM_LOCALID", 0, kMaxInt);
  }

 private:
  static constexpr const char* kContext =
      "SLURM_JOB_ID is set, but this is not an srun task (start the program with srun)";

  EnvReader env_;
};

}  // namespace

std::unique_ptr<ClusterEnv> make_slurm_env(EnvReader env) {
  return std::make_unique<SlurmEnv>(std::move(env));
}

}  // namespace spmd
