#include "runtime/local_gpus.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "spmd/error.h"

namespace spmd {
namespace {

std::string visible_text(int visible) {
  return visible == 1 ? "1 GPU (ordinal 0)"
                      : fmt::format("{} GPUs (ordinals 0..{})", visible, visible - 1);
}

std::vector<int> checked_ids(const std::vector<int>& requested, int visible) {
  std::vector<int> ids = requested;
  std::sort(ids.begin(), ids.end());
  if (ids.empty() || std::adjacent_find(ids.begin(), ids.end()) != ids.end() || ids.front() < 0 ||
      ids.back() >= visible) {
    throw InvalidArgument(fmt::format(
        "local_device_ids [{}] (Options::local_device_ids, SPMD_LOCAL_DEVICE_IDS) must be "
        "distinct GPU ordinals this process sees, and it sees {} (CUDA_VISIBLE_DEVICES counts "
        "first)",
        fmt::join(requested, ", "), visible_text(visible)));
  }
  return ids;
}

}  // namespace

std::vector<int> choose_local_gpus(const LocalGpuRequest& request) {
  const int visible = request.visible_gpus;
  if (visible < 1) throw InvalidArgument("choose_local_gpus: this process sees no GPU");
  if (request.local_device_ids) return checked_ids(*request.local_device_ids, visible);
  if (!request.local_rank) {
    std::vector<int> all(static_cast<size_t>(visible));
    for (int i = 0; i < visible; ++i) all[static_cast<size_t>(i)] = i;
    return all;
  }
  const int rank = *request.local_rank;
  if (rank < visible) return {rank};
  throw InvalidArgument(fmt::format(
      "{} started this process as local process {} of its host, and one process per GPU (JAX's "
      "rule under a launcher) gives it GPU {}, but it sees {}. Start at most {} process{} per "
      "host, or, where the launcher already gives each process its own GPU (srun "
      "--gpus-per-task, CUDA_VISIBLE_DEVICES per rank), pass local_device_ids "
      "(SPMD_LOCAL_DEVICE_IDS=0)",
      request.launcher, rank, rank, visible_text(visible), visible, visible == 1 ? "" : "es"));
}

}  // namespace spmd
