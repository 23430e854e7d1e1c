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
  bool gpu_built = false;  // the GPU plugin (libspmd_cuda: gpu_plugin.h) is loaded
  int visible_gpus = 0;    // GPUs this process sees
  std::string why_no_gpu;  // why there are none: no plugin, or the driver's answer
};

// This process's. The GPU plugin is loaded when `gpu_requested` (the requested list names gpu or
// cuda), or when nothing was requested and the machine has an NVIDIA driver; otherwise there are
// no GPUs, and CUDA is never loaded.
PlatformSupport platform_support(bool gpu_requested);

// Whether the requested list names gpu (or cuda).
bool names_gpu(const std::optional<std::string>& requested);

// The platform to run on, "cpu" or "gpu". Throws InvalidArgument for an empty list or an unknown
// name (listing the known ones), and when none of the requested platforms is here, saying for
// each why not and what to do instead.
std::string choose_platform(const std::optional<std::string>& requested,
                            const PlatformSupport& support);

}  // namespace spmd
