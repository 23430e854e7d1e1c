// JAX's choice of the platform a process's devices run on: the first platform of the requested
// list (distributed::Options::platforms, SPMD_PLATFORMS — JAX's JAX_PLATFORMS) that this
// process has; with none requested, GPUs when there are any, else CPU (JAX's default). Names:
// "cpu" and "gpu" ("cuda" is taken for "gpu", as JAX takes it). Pure; thread-safe.
#pragma once

#include <optional>
#include <string>

namespace spmd {

// What this process could run on.
struct PlatformSupport {
  bool gpu_built = false;  // this build of spmd has GPU support (CUDA and NCCL found)
  int visible_gpus = 0;    // GPUs this process sees
};

// This build's: no GPU devices yet (issue 45: the CUDA kernels and device collectives exist in
// libspmd_cuda and libspmd_gpu_comm, but the runtime does not make GPU devices), so CPU devices
// only.
PlatformSupport platform_support();

// The platform to run on, "cpu" or "gpu". Throws InvalidArgument for an empty list or an unknown
// name (listing the known ones), and when none of the requested platforms is here, saying for
// each why not and what to do instead.
std::string choose_platform(const std::optional<std::string>& requested,
                            const PlatformSupport& support);

}  // namespace spmd
