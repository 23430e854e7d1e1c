// The process-global runtime state: the only global mutable state of spmd (STYLE.md). Guarded by
// its mutex; initialize()/shutdown() replace it wholesale, device queries read a snapshot.
#pragma once

#include <memory>
#include <mutex>
#include <vector>

#include "spmd/device.h"

namespace spmd {

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

}  // namespace spmd
