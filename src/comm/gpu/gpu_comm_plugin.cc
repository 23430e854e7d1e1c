// libspmd_gpu_comm's entry point: makes its communicators the GPU platform's device communicators
// (comm/device_comm_factory.h), so that jit's collectives on GPU blocks go through them
// (compute/device_route.h). The runtime calls it after loading the GPU plugin
// (runtime/gpu_plugin.h), by name, with dlsym: C linkage, no exception crosses it.
//
// The factory makes NCCL's communicator (nccl_communicator.h) for a group whose ranks are on
// different GPUs, and the staged one (staged_communicator.h) where two ranks share a GPU, which
// NCCL refuses, or where this build has no NCCL. Which GPU a rank is on is its host and its PCI
// bus id, gathered over the group's host communicator when the communicator is made, so every
// rank takes the same decision.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <exception>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "comm/device_comm_factory.h"
#include "comm/gpu/staged_communicator.h"
#include "runtime/host_id.h"
#include "spmd/error.h"
#ifdef SPMD_WITH_NCCL
#include "comm/gpu/nccl_communicator.h"
#endif

namespace spmd {
namespace {

// This rank's GPU, as one number: its host id and PCI bus id, hashed.
uint64_t gpu_identity(int gpu) {
  char bus[32] = {};
  if (cudaDeviceGetPCIBusId(bus, sizeof(bus), gpu) != cudaSuccess) {
    cudaGetLastError();
    std::snprintf(bus, sizeof(bus), "ordinal %d", gpu);
  }
  return std::hash<std::string>{}(local_host_id(EnvReader()) + "/" + bus);
}

// Whether two ranks of `spec` are on one GPU (collective over spec.host).
bool shares_a_gpu(const DeviceCommSpec& spec) {
  Communicator host = spec.host;
  const std::vector<uint64_t> mine{gpu_identity(spec.memory.local_hardware_id)};
  std::vector<uint64_t> all(static_cast<size_t>(host.size()));
  host.all_gather(mine, all);
  std::sort(all.begin(), all.end());
  return std::adjacent_find(all.begin(), all.end()) != all.end();
}

class GpuCommFactory final : public DeviceCommFactory {
 public:
  std::string name() const override {
#ifdef SPMD_WITH_NCCL
    return "NCCL " + nccl_version();
#else
    return "staged (this build has no NCCL)";
#endif
  }

  std::string make_id() const override {
#ifdef SPMD_WITH_NCCL
    const NcclId id = make_nccl_id();
    return {id.data(), id.size()};
#else
    return "staged";
#endif
  }

  // NCCL has no 16-bit integers; the staged communicator moves every dtype.
  bool supports(DType dtype) const override {
    return dtype != DType::kInt16 && dtype != DType::kUInt16;
  }

  std::unique_ptr<DeviceCommunicator> make(const DeviceCommSpec& spec) const override {
    const int gpu = spec.memory.local_hardware_id;
#ifdef SPMD_WITH_NCCL
    if (!shares_a_gpu(spec)) {
      NcclId id{};
      if (spec.id.size() != id.size()) {
        throw InvalidArgument("a device communicator's id is not an NCCL unique id");
      }
      std::memcpy(id.data(), spec.id.data(), id.size());
      return make_nccl_communicator(id, spec.rank, spec.size, gpu);
    }
#endif
    return make_staged_communicator(spec.host, gpu);
  }
};

void write(const std::string& text, char* out, size_t size) {
  if (out == nullptr || size == 0) return;
  const size_t n = std::min(text.size(), size - 1);
  std::memcpy(out, text.data(), n);
  out[n] = '\0';
}

}  // namespace
}  // namespace spmd

extern "C" {

// Registers the GPU platform's device-communicator factory, once; 0, or nonzero with the error
// in `why` (size bytes, NUL-terminated). The factory's name goes to `name` either way.
int spmd_gpu_comm_register(char* name, size_t name_size, char* why, size_t why_size) noexcept {
  static std::once_flag once;
  static std::string failure;
  static const spmd::GpuCommFactory factory;
  try {
    std::call_once(once, [] { spmd::register_device_comm_factory("gpu", factory); });
    spmd::write(factory.name(), name, name_size);
  } catch (const std::exception& e) {
    failure = e.what();
  }
  if (failure.empty()) return 0;
  spmd::write(failure, why, why_size);
  return 1;
}

}  // extern "C"
