// sync_global_devices: a barrier of the coordination service, with the names compared so that
// processes at different sync points fail with both names instead of a bare timeout.
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <memory>

#include "runtime/runtime_state.h"
#include "spmd/coordination_client.h"
#include "spmd/distributed.h"
#include "spmd/error.h"
#include "spmd/multihost.h"
#include "spmd/runtime.h"

namespace spmd::multihost {

namespace {

// The number of sync_global_devices calls this process has made in the session: the n-th call
// of every process meets the others' n-th.
struct SyncCalls {
  std::atomic<uint64_t> made{0};
};

}  // namespace

void sync_global_devices(const std::string& name,
                         std::optional<std::chrono::milliseconds> timeout_or_default) {
  if (process_count() == 1) return;
  const std::chrono::milliseconds timeout = timeout_or_default.value_or(wait_timeout());
  distributed::Client& kv = distributed::client();
  const uint64_t n = session_object<SyncCalls>()->made++;
  const std::string dir = fmt::format("spmd/sync/{}", n);
  kv.key_value_set(fmt::format("{}/{}", dir, process_index()), name, true);
  kv.wait_at_barrier(dir, timeout);
  std::map<std::string, int> first_with;  // name -> lowest process that gave it
  for (const auto& [key, value] : kv.key_value_dir_get(dir)) {
    const int process = std::stoi(key.substr(key.rfind('/') + 1));
    auto [it, inserted] = first_with.emplace(value, process);
    if (!inserted) it->second = std::min(it->second, process);
  }
  if (first_with.size() > 1) {
    auto other = std::find_if(first_with.begin(), first_with.end(),
                              [&](const auto& e) { return e.first != name; });
    throw InvalidArgument(fmt::format(
        "sync_global_devices: process {} called it with {:?} but process {} with {:?}; every "
        "process must reach the same sync point",
        process_index(), name, other->second, other->first));
  }
  // Every process has read the names once all pass a second barrier: then they can go.
  kv.wait_at_barrier(dir + "/read", timeout);
  if (process_index() == 0) kv.key_value_delete(dir);
}

}  // namespace spmd::multihost
