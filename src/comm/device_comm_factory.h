// Where device communicators (device_collectives.h) come from, per platform: the GPU platform's
// plugin registers NCCL's (comm/gpu/plugin.cc), and a test registers its own for the CPU devices
// whose memory it simulates. The runtime's device groups (device_group.h) ask here when a
// collective meets device memory; a platform with no factory stages its collectives through the
// host instead.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "comm/device_collectives.h"
#include "spmd/communicator.h"
#include "spmd/memory_space.h"

namespace spmd {

// One rank's part of a new device communicator.
struct DeviceCommSpec {
  std::string id;  // what rank 0's make_id() returned, the same on every rank
  int rank = 0;    // this rank, in [0, size)
  int size = 1;
  MemorySpace memory;  // this rank's device
  Communicator host;   // the same ranks over spmd's host transports (for a staged fallback)
};

class DeviceCommFactory {
 public:
  virtual ~DeviceCommFactory() = default;
  // What the communicators are, for messages and spmd-status ("NCCL 2.28.9").
  virtual std::string name() const = 0;
  // A fresh id for a new communicator, made on rank 0 and handed to every rank (NCCL's unique
  // id: opening it may start a listener in this process). Bytes, any length.
  virtual std::string make_id() const = 0;
  // Whether its communicators move `dtype` (NCCL has no 16-bit integers): a collective of a
  // dtype it lacks stages through the host.
  virtual bool supports(DType /*dtype*/) const { return true; }
  // This rank's communicator of `spec`. May return before every rank has joined (kInProgress);
  // may run collectives of `spec.host` (every rank calls make at the same point).
  virtual std::unique_ptr<DeviceCommunicator> make(const DeviceCommSpec& spec) const = 0;
};

// Makes `factory` the one of `platform` ("gpu"); it lives until the process ends. Registering a
// platform again replaces its factory (a plugin loaded twice registers the same one).
void register_device_comm_factory(std::string_view platform, const DeviceCommFactory& factory);

// The factory of `platform`, or null when none was registered (its collectives stage through the
// host).
const DeviceCommFactory* device_comm_factory(std::string_view platform);

// While it lives, `platform`'s factory is `factory` (tests); the one before comes back when it
// ends. Install and remove it when no device collective runs; `factory` must outlive it.
class DeviceCommFactoryOverride {
 public:
  DeviceCommFactoryOverride(std::string_view platform, const DeviceCommFactory& factory);
  ~DeviceCommFactoryOverride();
  DeviceCommFactoryOverride(const DeviceCommFactoryOverride&) = delete;
  DeviceCommFactoryOverride& operator=(const DeviceCommFactoryOverride&) = delete;

 private:
  std::string platform_;
  const DeviceCommFactory* previous_;
};

}  // namespace spmd
