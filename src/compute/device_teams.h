// The thread teams of this process's CPU devices (kernels/thread_team.h): one per local CPU
// device, of runtime/cpu_threads.h's size, made on first use and kept for the runtime session
// (a call costs a hand-off to helpers already running, not a thread start). A GPU device's team
// is its own thread alone: its kernels run on the GPU.
//
// Thread-safe.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "kernels/thread_team.h"

namespace spmd {

class DeviceTeams {
 public:
  // The teams of devices `ids` (global device ids of this process), in that order.
  std::vector<kernels::ThreadTeam*> teams_of(const std::vector<int>& ids);

 private:
  std::mutex mu_;
  int threads_ = 0;  // per CPU device, fixed at the first call
  std::map<int, std::unique_ptr<kernels::ThreadTeam>> teams_;
};

// This session's teams.
std::shared_ptr<DeviceTeams> device_teams();

}  // namespace spmd
