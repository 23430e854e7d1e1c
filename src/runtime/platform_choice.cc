#include "runtime/platform_choice.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <vector>

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
    return "gpu: this build of spmd has no GPU support: GPUs are not yet devices of spmd's "
           "runtime (its CUDA kernels and device collectives are built where CMake finds the "
           "CUDA toolkit, but jit and shard_map do not run on them yet: README, \"GPUs\"); run "
           "on CPUs";
  }
  if (support.visible_gpus == 0) {
    return "gpu: this process sees no GPU (check CUDA_VISIBLE_DEVICES and the driver)";
  }
  return "";
}

}  // namespace

PlatformSupport platform_support() { return {}; }

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
