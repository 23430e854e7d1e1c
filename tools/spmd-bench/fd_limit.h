// Raising this process's open-file limit for the simulated cluster's processes.
#pragma once

namespace spmd::bench {

// Raises the soft RLIMIT_NOFILE to `needed` (up to the hard limit). Throws std::runtime_error
// naming both numbers when the hard limit is lower.
void raise_fd_limit(int needed);

}  // namespace spmd::bench
