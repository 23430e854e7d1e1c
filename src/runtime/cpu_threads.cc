// Dividing a host's cores among its CPU devices.
#include "runtime/cpu_threads.h"

#include <sched.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

namespace spmd {

std::optional<int> cgroup_quota_cores(std::string_view cpu_max) {
  const size_t space = cpu_max.find(' ');
  if (space == std::string_view::npos) return std::nullopt;
  long long quota = 0, period = 0;
  const std::string_view q = cpu_max.substr(0, space);
  std::string_view p = cpu_max.substr(space + 1);
  while (!p.empty() && (p.back() == '\n' || p.back() == ' ')) p.remove_suffix(1);
  if (std::from_chars(q.data(), q.data() + q.size(), quota).ec != std::errc() ||
      std::from_chars(p.data(), p.data() + p.size(), period).ec != std::errc() || quota <= 0 ||
      period <= 0) {
    return std::nullopt;  // "max": no quota
  }
  return static_cast<int>(std::max<long long>(1, (quota + period - 1) / period));
}

int available_cores() {
  int cores = 1;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) cores = std::max(1, CPU_COUNT(&set));
  std::ifstream in("/sys/fs/cgroup/cpu.max");
  std::stringstream text;
  text << in.rdbuf();
  if (const auto quota = cgroup_quota_cores(text.str())) cores = std::min(cores, *quota);
  return cores;
}

int threads_per_cpu_device(int requested, int cores, int local_cpu_devices, int processes_on_host) {
  if (requested > 0) return requested;
  const long long sharing =
      static_cast<long long>(std::max(local_cpu_devices, 1)) * std::max(processes_on_host, 1);
  return static_cast<int>(std::max<long long>(1, cores / sharing));
}

int session_cpu_threads_per_device(const DeviceView& view) {
  const int requested = requested_cpu_threads_per_device();
  if (requested > 0) return requested;
  int local_cpu = 0;
  for (const Device& d : view.local_devices) local_cpu += d.platform() == "cpu" ? 1 : 0;
  const std::string host = view.local_devices.empty() ? "" : view.local_devices[0].host_id();
  std::set<int> on_host;
  for (const Device& d : view.devices) {
    if (d.host_id() == host) on_host.insert(d.process_index());
  }
  return threads_per_cpu_device(0, available_cores(), local_cpu, static_cast<int>(on_host.size()));
}

}  // namespace spmd
