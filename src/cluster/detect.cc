#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cluster/cluster_env.h"
#include "spmd/error.h"

namespace spmd {

std::unique_ptr<ClusterEnv> detect_cluster_env(const std::optional<std::string>& method,
                                               const EnvReader& env) {
  // In detection order: spmdrun's own variables, then the launchers.
  std::vector<std::unique_ptr<ClusterEnv>> candidates;
  candidates.push_back(make_spmd_env(env));
  candidates.push_back(make_slurm_env(env));
  candidates.push_back(make_ompi_env(env));
  candidates.push_back(make_mpich_env(env));
  candidates.push_back(make_k8s_env(env));

  if (!method) {
    for (auto& c : candidates) {
      if (c->is_present() && !c->inherited()) return std::move(c);
    }
    return nullptr;
  }
  if (*method == "deactivate") return nullptr;
  std::vector<std::string> names = {"deactivate"};
  for (auto& c : candidates) {
    if (c->name() != *method) {
      names.push_back(c->name());
      continue;
    }
    if (!c->is_present()) {
      throw InvalidArgument(fmt::format(
          "cluster_detection_method '{}' was requested, but none of its variables ({}) is set",
          *method, fmt::join(c->marker_variables(), ", ")));
    }
    return std::move(c);
  }
  throw InvalidArgument(fmt::format("unknown cluster_detection_method '{}'; supported: {}", *method,
                                    fmt::join(names, ", ")));
}

}  // namespace spmd
