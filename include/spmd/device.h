// A device: the unit that holds array shards and runs per-device code, as a plain value.
//
// Part of the vocabulary every layer may use (header only, no runtime state). Which devices
// exist, and which this process holds, are the runtime's queries: spmd/runtime.h.
#pragma once

#include <string>
#include <utility>

namespace spmd {

// One device of the cluster. A small value type; equal ids mean the same device.
class Device {
 public:
  // `device_kind` "" is the platform's name ("cpu").
  Device(int id, int process_index, int local_hardware_id, std::string platform,
         std::string host_id, std::string device_kind = "")
      : id_(id),
        process_index_(process_index),
        local_hardware_id_(local_hardware_id),
        platform_(std::move(platform)),
        host_id_(std::move(host_id)),
        device_kind_(std::move(device_kind)) {}

  // The global id, dense in 0 … device_count()-1.
  int id() const { return id_; }
  // The index of the process that owns (can address) this device.
  int process_index() const { return process_index_; }
  // "cpu", or "gpu" for a CUDA GPU (distributed::Options::platforms).
  const std::string& platform() const { return platform_; }
  // What the hardware is, as JAX's Device.device_kind: "cpu" for a CPU device, the CUDA name
  // ("NVIDIA H100 80GB HBM3") for a GPU.
  const std::string& device_kind() const { return device_kind_.empty() ? platform_ : device_kind_; }
  // The id of the device within its process's hardware: 0 … K-1 for K CPU devices.
  int local_hardware_id() const { return local_hardware_id_; }
  // The host the device lives on: hostname plus boot id, or SPMD_HOST_ID when set. Processes
  // with equal host ids share a machine.
  const std::string& host_id() const { return host_id_; }
  // E.g. "CpuDevice(id=3, process_index=1, local_hardware_id=1)"; a GPU is a "CudaDevice", as
  // JAX names it.
  std::string to_string() const {
    const char* name = platform_ == "cpu"   ? "CpuDevice"
                       : platform_ == "gpu" ? "CudaDevice"
                                            : "Device";
    return std::string(name) + "(id=" + std::to_string(id_) +
           ", process_index=" + std::to_string(process_index_) +
           ", local_hardware_id=" + std::to_string(local_hardware_id_) + ")";
  }

  bool operator==(const Device& other) const { return id_ == other.id_; }

 private:
  int id_;
  int process_index_;
  int local_hardware_id_;
  std::string platform_;
  std::string host_id_;
  std::string device_kind_;
};

}  // namespace spmd
