// The default reaction to a dead peer (no Options::on_peer_failure): one line naming it on
// stderr, then _Exit(distributed::kPeerFailureExitCode).
//
// Two threads meet a peer's death. The io thread hears the service's notice and runs
// exit_on_peer_failure(). The program's own thread, blocked in a barrier or a collective, is
// woken with PeerFailure at the same moment, often first; a program that does not catch it would
// reach std::terminate and die of SIGABRT, so spmdrun would blame the survivor. While armed, a
// terminate handler turns an uncaught PeerFailure into the same exit: it waits (bounded) for the
// io thread's line, and writes one itself when the failure was seen only on the data plane.
// Any other uncaught exception goes on to the previous terminate handler unchanged.
#pragma once

#include "coord/coord_client.h"

namespace spmd {

class CoordService;

// From initialize() of a cluster using the default reaction, until shutdown(): process `self`.
// Installs the terminate handler the first time. Thread-safe.
void arm_peer_failure_exit(int self);
void disarm_peer_failure_exit();

// Runs on the io thread. _Exit skips destructors, which might wait on the dead cluster; the
// fast-exit cleanups (fast_exit.h) run before it.
// `service` is this process's own coordination service, or null: it lingers until the others
// have left, so the notice reaches them before this exit resets their connections.
[[noreturn]] void exit_on_peer_failure(int self, const CoordService* service,
                                       const FailureReport& info);

}  // namespace spmd
