// Where a buffer's bytes live: this process's host memory, or one local accelerator's memory.
//
// Part of the vocabulary (header only, no runtime state). A per-device block (block.h) carries
// its memory space, and a kernel backend (src/kernels/backend.h) reads and writes only its own,
// so a buffer handed to the wrong device's kernels is an error rather than a wild pointer.
#pragma once

#include <string>

namespace spmd {

struct MemorySpace {
  enum class Kind : unsigned char { kHost, kDevice };
  Kind kind = Kind::kHost;
  // kDevice: the device's id within its process's hardware (Device::local_hardware_id()).
  int local_hardware_id = -1;

  static MemorySpace host() { return {}; }
  static MemorySpace device(int local_hardware_id) { return {Kind::kDevice, local_hardware_id}; }
  bool operator==(const MemorySpace&) const = default;
  // "host" or "device:0".
  std::string to_string() const {
    return kind == Kind::kHost ? "host" : "device:" + std::to_string(local_hardware_id);
  }
};

}  // namespace spmd
