// Devices: the units that hold array shards and run per-device code.
//
// Every process of a cluster sees the same global device list. Global ids are dense,
// 0 … device_count()-1, ordered by process index and then by local hardware id. Before
// spmd::distributed::initialize() the queries below describe this process alone, as JAX does on a
// single host; querying them marks the runtime as used, after which initialize() is refused.
//
// All functions here are safe to call from any thread.
#pragma once

#include <string>
#include <vector>

namespace spmd {

// One device of the cluster. A small value type; equal ids mean the same device.
class Device {
 public:
  Device(int id, int process_index, int local_hardware_id, std::string platform,
         std::string host_id);

  // The global id, dense in 0 … device_count()-1.
  int id() const { return id_; }
  // The index of the process that owns (can address) this device.
  int process_index() const { return process_index_; }
  // "cpu" (CUDA devices appear with "gpu" once the build has CUDA and a GPU is present).
  const std::string& platform() const { return platform_; }
  // The id of the device within its process's hardware: 0 … K-1 for K CPU devices.
  int local_hardware_id() const { return local_hardware_id_; }
  // The host the device lives on: hostname plus boot id, or SPMD_HOST_ID when set. Processes
  // with equal host ids share a machine.
  const std::string& host_id() const { return host_id_; }
  // E.g. "CpuDevice(id=3, process_index=1, local_hardware_id=1)".
  std::string to_string() const;

  bool operator==(const Device& other) const { return id_ == other.id_; }

 private:
  int id_;
  int process_index_;
  int local_hardware_id_;
  std::string platform_;
  std::string host_id_;
};

// Every device of the cluster, in global id order.
std::vector<Device> devices();
// The devices this process can address, in global id order.
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
