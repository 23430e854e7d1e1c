// Cleanups for the exits that skip destructors: the default reaction to a peer's failure ends
// the process with _Exit (peer_failure_exit.h), because destructors might wait on the dead
// cluster. What a destructor would have released outside the process — a shared-memory name in
// /dev/shm — is released here instead. Layers above register their cleanups (the runtime does not
// know them).
#pragma once

namespace spmd {

// Registers `cleanup` to run right before such an exit. It must be quick, must not wait on the
// cluster, and may run on any thread. Thread-safe; registering the same function twice keeps one.
// At most 8 (an error past that: the registration is a programming error).
void add_fast_exit_cleanup(void (*cleanup)() noexcept);

// Runs every registered cleanup once, in the order registered. Never throws.
void run_fast_exit_cleanups() noexcept;

}  // namespace spmd
