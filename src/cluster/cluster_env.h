// One launcher's environment (spmdrun's SPMD_* variables now; Slurm, Open MPI and MPICH each get
// a file of their own behind the same interface), and detection among them.
//
// Detection order: explicit Options (handled by the runtime) > SPMD_* env > … . Implementations
// only read; they never fail in is_present(), and fail with InvalidArgument naming the variable
// and its value when a present environment holds a malformed value.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cluster/env_reader.h"

namespace spmd {

class ClusterEnv {
 public:
  virtual ~ClusterEnv() = default;

  // The name used by Options::cluster_detection_method, e.g. "env".
  virtual std::string name() const = 0;
  // Whether this launcher's variables are set at all.
  virtual bool is_present() const = 0;
  // Whether, although present, the variables were only inherited: another launcher running
  // inside this one's allocation started this process (mpirun inside an sbatch script).
  // Automatic detection passes over such an environment; naming it explicitly still uses it.
  virtual bool inherited() const { return false; }
  // The variables whose presence is_present() looks for, for error messages.
  virtual std::vector<std::string> marker_variables() const = 0;

  // Where process 0's coordination service will listen. May talk to the launcher (an exchange
  // every process of the job makes once, e.g. through PMI), within `timeout`.
  virtual std::optional<std::string> coordinator_address(
      std::chrono::milliseconds timeout) const = 0;
  virtual std::optional<int> num_processes() const = 0;
  virtual std::optional<int> process_id() const = 0;
  // This process's index among the processes of its host, when the launcher says.
  virtual std::optional<int> local_process_id() const = 0;
  // The launcher's choice of visible local devices, if it makes one.
  virtual std::optional<std::vector<int>> local_device_ids() const { return std::nullopt; }
};

// spmdrun's variables: SPMD_COORDINATOR_ADDRESS, SPMD_NUM_PROCESSES, SPMD_PROCESS_ID,
// SPMD_LOCAL_PROCESS_ID, SPMD_LOCAL_DEVICE_IDS.
std::unique_ptr<ClusterEnv> make_spmd_env(EnvReader env);

// Slurm (srun): SLURM_JOB_ID, SLURM_STEP_NODELIST, SLURM_NTASKS, SLURM_PROCID, SLURM_LOCALID.
// See slurm.cc for the rules.
std::unique_ptr<ClusterEnv> make_slurm_env(EnvReader env);

// Open MPI's mpirun/mpiexec: OMPI_COMM_WORLD_SIZE/RANK/LOCAL_RANK, and OMPI_MCA_orte_hnp_uri
// (4.x) or PMIx (5.x). See ompi.cc.
std::unique_ptr<ClusterEnv> make_ompi_env(EnvReader env);

// MPICH's Hydra (mpiexec.hydra) and other PMI-1 launchers: PMI_RANK, PMI_SIZE, MPI_LOCALRANKID,
// PMI_FD. See mpich.cc.
std::unique_ptr<ClusterEnv> make_mpich_env(EnvReader env);

// Kubernetes: the pods of an indexed Job (JOB_COMPLETION_INDEX, KUBERNETES_SERVICE_HOST), the
// process count read from the Job through the API server. See k8s.cc.
std::unique_ptr<ClusterEnv> make_k8s_env(EnvReader env);

// The coordinator port for a launcher job id: SPMD_COORDINATOR_PORT when set, else
// id % 4096 + 61440 (the top 4096 ports, as JAX picks them). Throws InvalidArgument for a bad
// SPMD_COORDINATOR_PORT.
int coordinator_port_for_job(uint64_t job_id, const EnvReader& env);

// Picks the environment to read. `method` unset: the first present one, or nullptr when none is.
// "deactivate": nullptr. A named method whose environment is absent, or an unknown name, throws
// InvalidArgument naming what was missing or what is supported.
std::unique_ptr<ClusterEnv> detect_cluster_env(const std::optional<std::string>& method,
                                               const EnvReader& env);

}  // namespace spmd
