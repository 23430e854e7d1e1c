// The open-file limit a coordination service needs: one descriptor per process it serves.
// Open to tools/: spmd-bench's simulated clusters raise the descriptor limit.
#pragma once

namespace spmd {

// Raises this process's soft RLIMIT_NOFILE to at least `needed`, up to the hard limit (a
// process may always do that). Throws spmd::Error naming both numbers, `who` and what to do when
// the hard limit is lower.
void raise_open_file_limit(int needed, const char* who);

}  // namespace spmd
