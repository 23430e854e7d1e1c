// Copying a chunk file out of a read-only mapping of it, hashing it on the way, and surviving a
// file that shrinks meanwhile.
//
// Why a mapping: read() copies from the page cache in the kernel, and on this machine (AMD EPYC,
// Linux 6.18, ext4's large folios) that copy leaves the destination out of the cache, so hashing
// what it wrote reads every byte from memory a second time: read() then XXH3 ran at 0.50x a plain
// read() on one process, 0.70-0.76x with two processes reading at once. Through a mapping, each
// piece is hashed from the page cache (which brings it into L2) and then copied from L2, so every
// byte crosses the memory bus once each way, as in the plain read(): spmd-bench checkpoint's
// restore went to 0.75-1.14x a plain read() (median 0.87x over 13 runs; DESIGN.md, "Reading
// checkpoints").
//
// Why the guard: a mapped file that another process truncates raises SIGBUS on the next access
// to a page past its new end, which would kill the process. copy_mapped() catches that SIGBUS on
// its own thread and returns false instead (runtime/bus_error_guard.h); a SIGBUS anywhere else
// goes to the handler that was installed before (or kills the process, as it would have).
#pragma once

#include <xxhash.h>

#include <cstddef>

namespace spmd::checkpoint {

// Copies n bytes from `mapped` (a read-only file mapping) to `out`, piece by piece, feeding each
// piece to `hash` first. Returns false when the file shrank under the mapping (SIGBUS): `out` and
// `hash` are then partly written. Thread-safe; installs a process-wide SIGBUS handler on first
// use, which chains to the previous one.
bool copy_mapped(const std::byte* mapped, std::byte* out, size_t n, XXH3_state_t* hash);

}  // namespace spmd::checkpoint
