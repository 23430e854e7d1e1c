// Agreeing on one value through the launcher's PMIx server (Open MPI 5's PRRTE, Open MPI 4's
// ORTE, Slurm's pmix plugin): rank 0 puts it, every other rank gets it.
#pragma once

#include <chrono>
#include <optional>
#include <string>

namespace spmd {

// True when this build has PMIx support and the process has a PMIx server to talk to
// (PMIX_SERVER_URI* in the environment).
bool pmix_available();

// Rank 0 (in the launcher's namespace) publishes `value` under `key`; every rank returns rank
// 0's value. Every rank of the job must call it. Throws spmd::Error naming the PMIx status when
// the exchange fails, and DeadlineExceeded when rank 0's value does not arrive within `timeout`.
std::string pmix_exchange_from_rank0(const std::string& key, const std::string& value,
                                     std::chrono::milliseconds timeout);

}  // namespace spmd
