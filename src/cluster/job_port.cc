#include <limits>

#include "cluster/cluster_env.h"

namespace spmd {

int coordinator_port_for_job(uint64_t job_id, const EnvReader& env) {
  if (auto port = env.get_int("SPMD_COORDINATOR_PORT", 1, 65535)) return *port;
  // The top 4096 ports: above most ephemeral ranges' busiest part, and the same rule as JAX, so a
  // cluster's firewall rules carry over.
  return static_cast<int>(job_id % 4096 + 61440);
}

}  // namespace spmd
