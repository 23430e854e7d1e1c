// Which way a named collective on a device block goes: through its group's device communicator
// (comm/device_group.h: NCCL on GPUs, under the watchdog), or staged through the host engine
// (a copy to host memory, the host collective, a copy back).
//
// The device communicator carries a group's collectives where:
// - the block is in device memory, and its platform has a device-communicator factory
//   (comm/device_comm_factory.h: the GPU plugin registers NCCL's);
// - each rank of the group is a device of a different process: the one-process-per-GPU layout
//   of seed 002, which NCCL's one communicator per process serves (a process with several
//   devices in one group stages, as NCCL would need its grouped calls across device threads);
// - SPMD_DEVICE_COLLECTIVES is not "host" (which stages every collective, for comparison).
// Everything else stages, with the same results.
//
// The groups live in the runtime session (dropped by shutdown()), one per communicator and
// device, each used by its device's thread. Thread-safe.
#pragma once

#include "comm/device_group.h"
#include "spmd/communicator.h"
#include "spmd/memory_space.h"

namespace spmd {

// The device group carrying `c`'s collectives on blocks in `memory`, made on first use; null
// where they stage through the host.
DeviceGroup* device_route(const Communicator& c, MemorySpace memory);

}  // namespace spmd
