#include "spmd/device.h"

#include <fmt/format.h>

#include "runtime/runtime_state.h"

namespace spmd {

Device::Device(int id, int process_index, int local_hardware_id, std::string platform,
               std::string host_id)
    : id_(id),
      process_index_(process_index),
      local_hardware_id_(local_hardware_id),
      platform_(std::move(platform)),
      host_id_(std::move(host_id)) {}

std::string Device::to_string() const {
  const std::string kind = platform_ == "cpu" ? "CpuDevice" : "Device";
  return fmt::format("{}(id={}, process_index={}, local_hardware_id={})", kind, id_, process_index_,
                     local_hardware_id_);
}

std::vector<Device> devices() { return current_device_view()->devices; }
std::vector<Device> local_devices() { return current_device_view()->local_devices; }
int device_count() { return static_cast<int>(current_device_view()->devices.size()); }
int local_device_count() { return static_cast<int>(current_device_view()->local_devices.size()); }
int process_index() { return current_device_view()->process_index; }
int process_count() { return current_device_view()->process_count; }

}  // namespace spmd
