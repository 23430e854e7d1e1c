// This process's view of the cluster: its devices and its place among the processes.
//
// Every process of a cluster sees the same global device list. Global ids are dense,
// 0 … device_count()-1, ordered by process index and then by local hardware id. Before
// spmd::distributed::initialize() these describe this process alone, as JAX does on a single
// host; querying them marks the runtime as used, after which initialize() is refused.
//
// All functions here are safe to call from any thread.
#pragma once

#include <vector>

#include "spmd/device.h"

namespace spmd {

// Every device of the cluster, in global id order (jax.devices()).
std::vector<Device> devices();
// The devices this process can address, in global id order (jax.local_devices()).
std::vector<Device> local_devices();
// The number of devices of the whole cluster.
int device_count();
// The number of devices this process can address.
int local_device_count();
// This process's index in 0 … process_count()-1.
int process_index();
// The number of processes of the cluster.
int process_count();

}  // namespace spmd
