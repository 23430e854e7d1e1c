#include "runtime/platform_choice.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <vector>

#include "runtime/gpu_plugin.h"
#include "spmd/error.h"

namespace spmd {
namespace {

std::vector<std::string> split(const std::string& list) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at <= list.size()) {
    const size_t comma = std::min(list.find(',', at), list.size());
    std::string name = list.substr(at, comma - at);
    name.erase(0, name.find_first_not_of(" \t"));
    name.erase(name.find_last_not_of(" \t") + 1);
    out.push_back(name);
    at = comma + 1;
  }
  return out;
}

// Why `platform` is not here, or "" when it is.
std::string missing(const std::string& platform, const PlatformSupport& support) {
  if (platform == "cpu") return "";
  if (!support.gpu_built) {
    return "gpu: " + (support.why_no_gpu.empty() ? std::string("this build of spmd has no GPU "
                                                               "support")
                                                 : support.why_no_gpu);
  }
  if (support.visible_gpus == 0) {
    return fmt::format(
        "gpu: this process sees no GPU ({}; check the driver, nvidia-smi and "
        "CUDA_VISIBLE_DEVICES)",
        support.why_no_gpu.empty() ? "none reported" : support.why_no_gpu);
  }
  return "";
}

}  // namespace

PlatformSupport platform_support(bool gpu_requested) {
  if (!gpu_requested && !nvidia_driver_present()) {
    return {.why_no_gpu = "this machine has no NVIDIA driver (no /proc/driver/nvidia)"};
  }
  const GpuPlugin& plugin = load_gpu_plugin();
  if (!plugin.loaded) return {.why_no_gpu = plugin.why_not_loaded};
  return {.gpu_built = true, .visible_gpus = plugin.visible_gpus, .why_no_gpu = plugin.why_no_gpu};
}

bool names_gpu(const std::optional<std::string>& requested) {
  if (!requested) return false;
  for (const std::string& name : split(*requested)) {
    if (name == "gpu" || name == "cuda") return true;
  }
  return false;
}

std::string choose_platform(const std::optional<std::string>& requested,
                            const PlatformSupport& support) {
  if (!requested) return missing("gpu", support).empty() ? "gpu" : "cpu";
  std::vector<std::string> names = split(*requested);
  std::vector<std::string> reasons;
  for (std::string& name : names) {
    if (name == "cuda") name = "gpu";
    if (name != "cpu" && name != "gpu") {
      throw InvalidArgument(fmt::format(
          "platforms \"{}\" (Options::platforms, SPMD_PLATFORMS): unknown platform \"{}\"; the "
          "platforms are cpu and gpu (or cuda), comma-separated in order of preference",
          *requested, name));
    }
  }
  for (const std::string& name : names) {
    const std::string why = missing(name, support);
    if (why.empty()) return name;
    reasons.push_back(why);
  }
  throw InvalidArgument(fmt::format(
      "platforms \"{}\" (Options::platforms, SPMD_PLATFORMS): none of them is here: {}. Add cpu to "
      "the list to fall back to CPU devices",
      *requested, fmt::join(reasons, "; ")));
}

}  // namespace spmd
