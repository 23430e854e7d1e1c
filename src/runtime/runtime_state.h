// The process-global runtime state: the only global mutable state of spmd (STYLE.md). Guarded by
// its mutex; initialize()/shutdown() replace it wholesale, device queries read a snapshot.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "spmd/device.h"

namespace spmd {

class CoordClient;

// What the device queries return.
struct DeviceView {
  int process_index = 0;
  int process_count = 1;
  std::vector<Device> devices;
  std::vector<Device> local_devices;
};

// The view of the initialised cluster, or, before initialize(), of this process alone; taking
// it before initialize() marks the runtime as used so that a later initialize() is refused.
std::shared_ptr<const DeviceView> current_device_view();

// What the collectives engine needs from the runtime, taken once per communicator.
struct CommHandles {
  std::shared_ptr<const DeviceView> view;
  // The coordination client, for rendezvous and the abort flag; null when the process runs
  // alone (before initialize(), or initialized as a single process).
  std::shared_ptr<CoordClient> coord;
  // An IP address of this host that the others reach (the local end of the connection to the
  // coordination service); empty when the process runs alone.
  std::string data_address;
  // How long communicator creation waits for the other processes.
  std::chrono::milliseconds setup_timeout{std::chrono::minutes(5)};
};
CommHandles comm_handles();

// A value that lives as long as the current runtime session: made by `make` on first use under
// `name`, dropped by distributed::shutdown() before the coordination client goes (so what it
// owns — sockets, shared memory — closes while the cluster is still there). The collectives
// engine keeps its world communicator and group registry here, the one place global state may
// live (STYLE.md). `make` runs under the runtime's lock: it must not call back into the runtime.
std::shared_ptr<void> runtime_attachment(const std::string& name,
                                         const std::function<std::shared_ptr<void>()>& make);

}  // namespace spmd
