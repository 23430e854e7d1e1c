// The coordinator address process 0 announces through a launcher's own key-value exchange
// (PMI-1 under MPICH's Hydra, PMIx under Open MPI 5), for launchers that do not name a
// coordinator host themselves.
#pragma once

#include <string>

#include "cluster/env_reader.h"

namespace spmd {

// "host:port": host is SPMD_COORDINATOR_HOST or this machine's hostname; port is
// SPMD_COORDINATOR_PORT or one that is free on every interface right now.
std::string address_to_publish(const EnvReader& env);

}  // namespace spmd
