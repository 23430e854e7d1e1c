// Turning the topology the coordination service sends into the device list every process sees.
// Pure; thread-safe.
#pragma once

#include <memory>

#include "protocol.pb.h"
#include "runtime/runtime_state.h"

namespace spmd {

// The device view of process `self` in a cluster of `num_processes`. Global ids are dense,
// ordered by process, then local order. Throws spmd::Error when any size or index in `topology`
// is inconsistent (bytes from the network are never trusted).
std::shared_ptr<const DeviceView> view_from_topology(const wire::Topology& topology, int self,
                                                     int num_processes);

}  // namespace spmd
