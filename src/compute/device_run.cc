#include "compute/device_run.h"

#include <fmt/format.h>
#include <xxhash.h>

#include <exception>
#include <functional>
#include <mutex>
#include <optional>

#include "compute/axis_context.h"
#include "compute/device_teams.h"
#include "compute/device_workers.h"
#include "compute/output_check.h"
#include "compute/resident_shard.h"
#include "kernels/float_environment.h"
#include "kernels/thread_team.h"
#include "runtime/exception_message.h"
#include "spmd/error.h"
#include "spmd/runtime.h"

namespace spmd {

bool same_layout(const Array& x, const Sharding& target) {
  if (x.sharding().num_devices() != target.num_devices()) return false;
  const auto have = x.sharding().devices_indices_map(x.shape());
  const auto want = target.devices_indices_map(x.shape());
  for (size_t i = 0; i < have.size(); ++i) {
    if (!(have[i].device == want[i].device) || !(have[i].index == want[i].index)) return false;
  }
  return true;
}

Block block_of(const Array& x, int id, size_t input, MemorySpace memory) {
  for (const auto& shard : x.addressable_shards()) {
    if (shard.device.id() == id) {
      if (std::optional<Block> there = resident_block(shard.data, memory)) return *there;
      return Block::view(x.dtype(), shard.data.shape(), shard.data.bytes().data());
    }
  }
  throw InvalidArgument(fmt::format("shard_map: input {} has no shard on device {}", input, id));
}

LocalMeshDevices local_mesh_devices(const Mesh& mesh) {
  const int me = process_index();
  LocalMeshDevices local;
  for (int64_t f = 0; f < mesh.size(); ++f) {
    const Device& d = mesh.devices()[static_cast<size_t>(f)];
    if (d.process_index() != me) continue;
    local.positions.push_back(f);
    local.ids.push_back(d.id());
    local.hardware.push_back(d.local_hardware_id());
    local.coords.push_back(mesh.coordinates(f));
  }
  if (local.positions.empty()) {
    throw InvalidArgument(fmt::format(
        "shard_map: process {} owns no device of {}; only the processes owning mesh devices call "
        "it",
        me, mesh.to_string()));
  }
  return local;
}

uint64_t call_identity(const char* program, const std::vector<PartitionSpec>& in_specs,
                       const std::vector<PartitionSpec>& out_specs) {
  std::string identity = program;
  for (const auto& spec : in_specs) identity += "|" + spec.to_string();
  identity += "|->";
  for (const auto& spec : out_specs) identity += "|" + spec.to_string();
  return XXH3_64bits(identity.data(), identity.size());
}

void for_each_local_device(AxisGroups& groups, const LocalMeshDevices& local, std::string_view what,
                           const std::function<void(size_t, const AxisContext&)>& job) {
  if (in_axis_context()) {  // this thread is a device's, in a job of the same workers: no end
    throw FailedPrecondition(fmt::format(
        "{}: called on a device's thread while it runs (inside a shard_map or pmap function, or "
        "in a host callback such as jax.debug.callback or jax.pure_callback), where it would "
        "wait for that device forever; compute with NumPy on a callback's values "
        "(np.asarray(x)) instead",
        what));
  }
  const size_t n = local.ids.size();
  std::mutex error_mu;
  std::exception_ptr first_error;
  const std::vector<kernels::ThreadTeam*> teams = device_teams()->teams_of(local.ids);
  auto guarded = [&](size_t i) {
    const AxisContext context{&groups, local.ids[i], local.coords[i]};
    try {
      const AxisContextScope scope(context);
      const kernels::TeamScope team(teams[i]);    // the device's cores
      const kernels::FlushSubnormalsScope flush;  // as XLA runs a computation
      job(i, context);
    } catch (...) {
      std::lock_guard lock(error_mu);
      if (!first_error) {
        first_error = std::current_exception();
        groups.close(fmt::format("device {} of process {} failed in {}: {}", local.ids[i],
                                 process_index(), what, exception_message(first_error)));
      }
    }
  };
  std::vector<std::function<void()>> jobs;
  jobs.reserve(n);
  for (size_t i = 0; i < n; ++i) jobs.emplace_back([&guarded, i] { guarded(i); });
  device_workers()->run(jobs);
  if (first_error) {
    groups.reopen();  // every device is done with the failed call
    std::rethrow_exception(first_error);
  }
}

std::vector<std::vector<Block>> run_on_devices(AxisGroups& groups, const LocalMeshDevices& local,
                                               uint64_t call,
                                               const std::vector<PartitionSpec>& out_specs,
                                               const ShardMapOptions& options,
                                               std::vector<std::vector<Block>>& blocks,
                                               const detail::BlockFunction& fn) {
  std::vector<std::vector<Block>> results(local.ids.size());
  for_each_local_device(groups, local, "the shard_map function",
                        [&](size_t i, const AxisContext& context) {
                          results[i] = fn(blocks[i]);
                          check_outputs(context, call, out_specs, options, results[i]);
                        });
  return results;
}

}  // namespace spmd
