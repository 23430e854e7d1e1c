#include "runtime/runtime_state.h"
#include "spmd/runtime.h"

namespace spmd {

std::vector<Device> devices() { return current_device_view()->devices; }
std::vector<Device> local_devices() { return current_device_view()->local_devices; }
int device_count() { return static_cast<int>(current_device_view()->devices.size()); }
int local_device_count() { return static_cast<int>(current_device_view()->local_devices.size()); }
int process_index() { return current_device_view()->process_index; }
int process_count() { return current_device_view()->process_count; }

}  // namespace spmd
