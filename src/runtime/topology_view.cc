#include "runtime/topology_view.h"

#include <fmt/format.h>

#include "spmd/error.h"

namespace spmd {

std::shared_ptr<const DeviceView> view_from_topology(const wire::Topology& topo, int self,
                                                     int num_processes) {
  auto malformed = [](const std::string& what) {
    return Error("the coordination service sent a malformed topology (" + what +
                 "); is every process running the same spmd release?");
  };
  if (topo.host_index_size() != num_processes || topo.pid_size() != num_processes ||
      topo.device_count_size() != num_processes) {
    throw malformed(
        fmt::format("{} processes, expected {}", topo.host_index_size(), num_processes));
  }
  if (topo.local_hardware_id_size() != topo.platform_index_size() ||
      (topo.device_kind_index_size() != 0 &&
       topo.device_kind_index_size() != topo.local_hardware_id_size())) {
    throw malformed("device columns differ in length");
  }
  auto view = std::make_shared<DeviceView>();
  view->process_index = self;
  view->process_count = num_processes;
  view->devices.reserve(static_cast<size_t>(topo.local_hardware_id_size()));
  int d = 0;
  for (int p = 0; p < num_processes; ++p) {
    const int h = topo.host_index(p);
    const int count = topo.device_count(p);
    if (h < 0 || h >= topo.hosts_size()) throw malformed("host index out of range");
    if (count < 0 || count > topo.local_hardware_id_size() - d) {
      throw malformed("device count out of range");
    }
    const std::string& host = topo.hosts(h).host_id();
    for (int i = 0; i < count; ++i, ++d) {
      const int pi = topo.platform_index(d);
      if (pi < 0 || pi >= topo.platforms_size()) throw malformed("platform index out of range");
      std::string kind;
      if (topo.device_kind_index_size() != 0) {
        const int ki = topo.device_kind_index(d);
        if (ki < 0 || ki >= topo.device_kinds_size()) throw malformed("kind index out of range");
        kind = topo.device_kinds(ki);
      }
      view->devices.emplace_back(d, p, topo.local_hardware_id(d), topo.platforms(pi), host,
                                 std::move(kind));
      if (p == self) view->local_devices.push_back(view->devices.back());
    }
  }
  if (d != topo.local_hardware_id_size()) throw malformed("device counts do not add up");
  return view;
}

}  // namespace spmd
