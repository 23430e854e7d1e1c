#include "compute/device_route.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>
#include <map>
#include <mutex>
#include <set>
#include <string_view>
#include <utility>

#include "comm/peers_now.h"
#include "coord/coord_client.h"
#include "kernels/backend.h"
#include "runtime/runtime_state.h"
#include "spmd/distributed.h"

namespace spmd {
namespace {

// The session's device groups, by communicator id and device; a null entry is a group that
// stages.
struct DeviceRoutes {
  std::mutex mutex;
  std::map<std::pair<uint64_t, int>, std::unique_ptr<DeviceGroup>> groups;
};

bool staging_asked() {
  const char* v = std::getenv("SPMD_DEVICE_COLLECTIVES");
  return v != nullptr && std::string_view(v) == "host";
}

// Each rank's process, or an empty vector when two ranks share one.
std::vector<int> distinct_processes(const Communicator& c, const DeviceView& view) {
  std::vector<int> processes;
  std::set<int> seen;
  for (int id : c.device_ids()) {
    const int p = view.devices.at(static_cast<size_t>(id)).process_index();
    if (!seen.insert(p).second) return {};
    processes.push_back(p);
  }
  return processes;
}

std::string this_process(const DeviceView& view) {
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  return fmt::format("process {} on host {}", view.process_index, host);
}

std::unique_ptr<DeviceGroup> make_group(const Communicator& c, MemorySpace memory) {
  const kernels::Backend& backend = kernels::backend_of(memory);
  const DeviceCommFactory* factory = device_comm_factory(backend.platform());
  if (factory == nullptr) return nullptr;
  const CommHandles handles = comm_handles();
  std::vector<int> processes = distinct_processes(c, *handles.view);
  if (processes.empty()) return nullptr;
  DeviceGroupConfig config;
  config.deadline = wait_timeout();
  config.who = this_process(*handles.view);
  std::vector<int> others;
  for (int p : processes) {
    if (p != handles.view->process_index) others.push_back(p);
  }
  config.processes = std::move(processes);
  if (handles.coord) {
    config.client = &distributed::client();
    config.peer_dead = [coord = handles.coord](std::string* report) {
      if (!coord->aborted()) return false;
      *report = coord->abort_reason();
      return true;
    };
    config.describe_others = [coord = handles.coord, others] {
      return describe_peers_now(coord.get(), others);
    };
    config.show_wait = [coord = handles.coord](const std::string& call) {
      const uint64_t token = coord->activity().begin_wait(call + " on the device", {},
                                                          std::chrono::steady_clock::now());
      return std::function<void()>([coord, token] { coord->activity().end_wait(token); });
    };
    config.finished = [coord = handles.coord](const char* op, uint64_t sequence) {
      coord->activity().note_finished(op, sequence);
    };
  }
  DeviceQueue queue{backend.stream(memory), [&backend, memory] { return backend.fence(memory); }};
  return std::make_unique<DeviceGroup>(c, memory, *factory, std::move(queue), std::move(config));
}

}  // namespace

DeviceGroup* device_route(const Communicator& c, MemorySpace memory) {
  if (memory.kind != MemorySpace::Kind::kDevice || staging_asked()) return nullptr;
  auto routes = session_object<DeviceRoutes>();
  std::lock_guard lock(routes->mutex);
  const auto key = std::make_pair(c.id(), memory.local_hardware_id);
  auto it = routes->groups.find(key);
  if (it == routes->groups.end()) it = routes->groups.emplace(key, make_group(c, memory)).first;
  return it->second.get();
}

}  // namespace spmd
