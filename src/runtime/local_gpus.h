// JAX's choice of the GPUs a process drives (jax._src.clusters.ClusterEnv): local_device_ids when
// given; otherwise, under a launcher that says which local process this is (Slurm's
// SLURM_LOCALID, Open MPI's OMPI_COMM_WORLD_LOCAL_RANK, MPICH's MPI_LOCALRANKID, spmdrun's
// SPMD_LOCAL_PROCESS_ID), one GPU per process, the local rank's; otherwise every visible GPU.
// Ordinals count the GPUs this process sees (after CUDA_VISIBLE_DEVICES). Pure; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace spmd {

struct LocalGpuRequest {
  std::optional<std::vector<int>> local_device_ids;  // Options / SPMD_LOCAL_DEVICE_IDS
  std::optional<int> local_rank;                     // the launcher's local process id
  std::string launcher;                              // its name, for errors: "slurm", …
  int visible_gpus = 0;
};

// The GPU ordinals, ascending. Throws InvalidArgument, naming what to change, for ids that are
// not distinct visible ordinals, and for a local rank past the visible GPUs (more processes on a
// host than GPUs, or a launcher that already gave each process one GPU of its own).
std::vector<int> choose_local_gpus(const LocalGpuRequest& request);

}  // namespace spmd
