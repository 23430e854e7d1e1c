// How many threads each CPU device computes with (kernels/thread_team.h): what was asked for,
// else the cores this process may use divided among its CPU devices and the other processes of
// its host, so that a host's devices together use each core once.
#pragma once

#include <optional>
#include <string_view>

#include "runtime/runtime_state.h"

namespace spmd {

// The cores this process may run on: its CPU affinity mask, lowered to the cgroup's CPU quota
// (cgroup v2's cpu.max under /sys/fs/cgroup, as a container limit) rounded up. At least 1.
int available_cores();

// The cgroup v2 quota of a cpu.max text ("max 100000", "250000 100000"), rounded up to whole
// cores; nothing for "max" or unreadable text.
std::optional<int> cgroup_quota_cores(std::string_view cpu_max);

// `requested` when positive; else cores / (local_cpu_devices × processes_on_host), at least 1.
int threads_per_cpu_device(int requested, int cores, int local_cpu_devices, int processes_on_host);

// threads_per_cpu_device for this session: the setting, available_cores(), and the view's
// CPU devices of this process and processes sharing its host id.
int session_cpu_threads_per_device(const DeviceView& view);

}  // namespace spmd
