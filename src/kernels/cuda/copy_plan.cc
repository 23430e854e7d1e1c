#include "kernels/cuda/copy_plan.h"

#include <fmt/format.h>

#include "spmd/error.h"

namespace spmd::kernels::cuda {
namespace {

bool on_device(MemorySpace m) {
  if (m.kind != MemorySpace::Kind::kDevice) return false;
  if (m.local_hardware_id < 0) {
    throw InvalidArgument(fmt::format("copy: {} names no GPU", m.to_string()));
  }
  return true;
}

}  // namespace

CopyPlan plan_copy(MemorySpace from, MemorySpace to) {
  const bool source = on_device(from), destination = on_device(to);
  if (!source && !destination) return {};
  if (!source) return {CopyPlan::Kind::kHostToDevice, to.local_hardware_id, -1, false};
  if (!destination) return {CopyPlan::Kind::kDeviceToHost, from.local_hardware_id, -1, true};
  if (from.local_hardware_id == to.local_hardware_id) {
    return {CopyPlan::Kind::kOnDevice, to.local_hardware_id, -1, false};
  }
  return {CopyPlan::Kind::kPeer, to.local_hardware_id, from.local_hardware_id, false};
}

}  // namespace spmd::kernels::cuda
