// Touching memory that another party can take away: a page of a file or shared-memory mapping
// whose file was truncated raises SIGBUS on the next access, which would kill the process. A
// checkpoint's chunk file can shrink under its reader (checkpoint/mapped_copy.h); a same-host peer
// can free a buffer it shared while a collective still reads it (comm/peer_mappings.h).
//
// catching_bus_errors(body) runs `body` and reports such a SIGBUS on the calling thread as a
// false return instead of a dead process. It leaves `body` by siglongjmp, so `body` must be plain:
// C calls and loops over raw memory, no object with a destructor that must run, no lock taken.
// A SIGBUS outside a guarded body — another thread, or this one outside it — goes to the handler
// installed before the first guard (or kills the process, as it would have).
#pragma once

#include <type_traits>

namespace spmd {

// Runs body(context); true when it returned, false when a SIGBUS on this thread ended it (its
// work is then partly done). Guards nest. An exception thrown by `body` passes through, the
// guard undone. Installs a process-wide SIGBUS handler on first use, chaining to the previous
// one. Thread-safe.
bool run_catching_bus_errors(void (*body)(void* context), void* context);

// The same for a callable (its call operator must be as plain as `body` above).
template <typename F>
bool catching_bus_errors(F&& body) {
  return run_catching_bus_errors([](void* f) { (*static_cast<std::remove_reference_t<F>*>(f))(); },
                                 &body);
}

}  // namespace spmd
