// Turning distributed::Options plus the environment into the complete, validated settings that
// initialize() acts on. Pure apart from the injected environment; thread-safe.
#pragma once

#include <chrono>
#include <csignal>
#include <string>
#include <vector>

#include "cluster/env_reader.h"
#include "spmd/distributed.h"

namespace spmd {

struct ResolvedOptions {
  // No coordinator address, process count or process id was given or detected: run alone.
  bool single_process = false;
  std::string coordinator_address;  // validated host:port
  int num_processes = 1;
  int process_id = 0;
  int num_cpu_devices = 1;
  int cpu_threads_per_device = 0;     // 0: divide the cores (cpu_threads.h)
  std::string platform = "cpu";       // the devices' platform (platform_choice.h)
  std::vector<int> local_device_ids;  // visible local hardware ids, ascending
  std::string bind_address;           // validated host:port
  std::string auth_token;
  bool external_coordinator = false;
  std::chrono::milliseconds initialization_timeout{0};
  std::chrono::milliseconds heartbeat_timeout{0};
  std::chrono::milliseconds shutdown_timeout{0};
  int preemption_signal = SIGTERM;
  std::string status_http;  // "ip:port" of the status page, or empty: none
  std::string source;       // where the cluster arguments came from: "Options", "env", …
};

// The number of CPU devices a process owns outside a cluster, and the default inside one:
// SPMD_CPU_DEVICES or 1. Throws InvalidArgument for a bad value.
int default_cpu_device_count(const EnvReader& env);

// Threads per CPU device asked for: SPMD_CPU_THREADS_PER_DEVICE, or 0 (divide the cores) when
// unset. Throws InvalidArgument for a bad value.
int requested_cpu_threads(const EnvReader& env);

// Fields set in `options` win; the rest come from the detected cluster environment and SPMD_*
// variables. Durations come from the environment only where `options` keeps the default.
// Throws InvalidArgument (naming the argument and where it can come from) for anything missing,
// malformed or out of range.
ResolvedOptions resolve_options(const distributed::Options& options, const EnvReader& env);

}  // namespace spmd
