// Each local CPU device's team, sized once per session.
#include "compute/device_teams.h"

#include "runtime/cpu_threads.h"
#include "runtime/runtime_state.h"

namespace spmd {

std::vector<kernels::ThreadTeam*> DeviceTeams::teams_of(const std::vector<int>& ids) {
  {  // every call of a jit program asks: the teams already made cost one lookup each
    std::lock_guard lock(mu_);
    std::vector<kernels::ThreadTeam*> teams;
    teams.reserve(ids.size());
    for (int id : ids) {
      const auto it = teams_.find(id);
      if (it == teams_.end()) break;
      teams.push_back(it->second.get());
    }
    if (teams.size() == ids.size()) return teams;
  }
  const std::shared_ptr<const DeviceView> view = current_device_view();
  std::lock_guard lock(mu_);
  if (threads_ == 0) threads_ = session_cpu_threads_per_device(*view);
  std::vector<kernels::ThreadTeam*> teams;
  teams.reserve(ids.size());
  for (int id : ids) {
    auto& team = teams_[id];
    if (!team) {
      bool cpu = true;
      for (const Device& d : view->local_devices) {
        if (d.id() == id) cpu = d.platform() == "cpu";
      }
      team = std::make_unique<kernels::ThreadTeam>(cpu ? threads_ : 1);
    }
    teams.push_back(team.get());
  }
  return teams;
}

std::shared_ptr<DeviceTeams> device_teams() { return session_object<DeviceTeams>(); }

}  // namespace spmd
