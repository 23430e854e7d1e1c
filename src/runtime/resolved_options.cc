#include "runtime/resolved_options.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <string>
#include <utility>

#include "cluster/cluster_env.h"
#include "coord/address.h"
#include "coord/status_http.h"
#include "runtime/gpu_plugin.h"
#include "runtime/local_gpus.h"
#include "runtime/platform_choice.h"
#include "spmd/error.h"

namespace spmd {
namespace {

// A process owns at most this many CPU devices; each is a worker thread.
constexpr int kMaxCpuDevices = 1024;
// A CPU device computes with at most this many threads.
constexpr int kMaxCpuThreads = 1024;

template <typename T>
std::optional<T> first_of(const std::optional<T>& a, const std::optional<T>& b) {
  return a ? a : b;
}

// A signal number a process may catch (not SIGKILL or SIGSTOP).
int checked_signal(int sig, const std::string& where) {
  if (sig <= 0 || sig >= NSIG || sig == SIGKILL || sig == SIGSTOP) {
    throw InvalidArgument(
        fmt::format("{} = {} is not a signal a process can catch (e.g. SIGTERM = {}, SIGUSR1 = {})",
                    where, sig, SIGTERM, SIGUSR1));
  }
  return sig;
}

// SPMD_PREEMPTION_SIGNAL: a number or one of the names below (with or without "SIG").
int env_signal(const EnvReader& env) {
  const auto raw = env.get("SPMD_PREEMPTION_SIGNAL");
  if (!raw || raw->empty()) return SIGTERM;
  std::string name = *raw;
  if (name.rfind("SIG", 0) == 0) name = name.substr(3);
  const std::pair<const char*, int> names[] = {
      {"TERM", SIGTERM}, {"INT", SIGINT}, {"HUP", SIGHUP}, {"USR1", SIGUSR1}, {"USR2", SIGUSR2}};
  for (const auto& [n, sig] : names) {
    if (name == n) return sig;
  }
  char* end = nullptr;
  const long v = std::strtol(raw->c_str(), &end, 10);
  if (end == raw->c_str() || *end != '\0') {
    throw InvalidArgument(fmt::format(
        "SPMD_PREEMPTION_SIGNAL={:?} is not a signal: give a number or TERM, INT, HUP, USR1, USR2",
        *raw));
  }
  return checked_signal(static_cast<int>(v), "SPMD_PREEMPTION_SIGNAL");
}

}  // namespace

int default_cpu_device_count(const EnvReader& env) {
  return env.get_int("SPMD_CPU_DEVICES", 1, kMaxCpuDevices).value_or(1);
}

int requested_cpu_threads(const EnvReader& env) {
  return env.get_int("SPMD_CPU_THREADS_PER_DEVICE", 1, kMaxCpuThreads).value_or(0);
}

namespace {

// Where the cluster's three numbers come from: Options first, then the detected launcher.
struct ClusterArgs {
  std::optional<std::string> address;
  std::optional<int> num_processes;
  std::optional<int> process_id;
  std::optional<std::vector<int>> local_ids;
  std::optional<int> local_rank;  // the launcher's local process id
  std::string launcher;           // its name
  std::string source = "Options";
};

ClusterArgs cluster_args(const distributed::Options& options, const EnvReader& env, bool read_env) {
  ClusterArgs a{options.coordinator_address, options.num_processes, options.process_id,
                options.local_device_ids};
  std::unique_ptr<ClusterEnv> cluster = detect_cluster_env(options.cluster_detection_method, env);
  if (cluster) {
    if (!a.address && !a.num_processes && !a.process_id) a.source = "env (" + cluster->name() + ")";
    a.num_processes = first_of(a.num_processes, cluster->num_processes());
    a.process_id = first_of(a.process_id, cluster->process_id());
    if (!a.address) a.address = cluster->coordinator_address(options.initialization_timeout);
    a.local_ids = first_of(a.local_ids, cluster->local_device_ids());
    a.local_rank = cluster->local_process_id();
    a.launcher = cluster->name();
  }
  if (!a.local_ids && read_env) {
    a.local_ids = env.get_int_list("SPMD_LOCAL_DEVICE_IDS", 0, kMaxCpuDevices - 1);
  }
  return a;
}

// num_cpu_devices and the visible local devices: on GPUs JAX's choice (local_gpus.h).
void resolve_devices(const distributed::Options& options, const EnvReader& env, bool read_env,
                     const ClusterArgs& args, ResolvedOptions& r) {
  const std::optional<std::vector<int>>& local_ids = args.local_ids;
  if (r.platform == "gpu") {
    r.local_device_ids = choose_local_gpus(
        {local_ids, args.local_rank, args.launcher, load_gpu_plugin().visible_gpus});
    return;
  }
  r.num_cpu_devices =
      options.num_cpu_devices.value_or(read_env ? default_cpu_device_count(env) : 1);
  if (r.num_cpu_devices < 1 || r.num_cpu_devices > kMaxCpuDevices) {
    throw InvalidArgument(
        fmt::format("num_cpu_devices must be in 1..{}, got {}", kMaxCpuDevices, r.num_cpu_devices));
  }
  if (options.cpu_threads_per_device) {
    r.cpu_threads_per_device = *options.cpu_threads_per_device;
    if (r.cpu_threads_per_device < 1 || r.cpu_threads_per_device > kMaxCpuThreads) {
      throw InvalidArgument(fmt::format("cpu_threads_per_device must be in 1..{}, got {}",
                                        kMaxCpuThreads, r.cpu_threads_per_device));
    }
  } else if (read_env) {
    r.cpu_threads_per_device = requested_cpu_threads(env);
  }
  if (!local_ids) {
    for (int i = 0; i < r.num_cpu_devices; ++i) r.local_device_ids.push_back(i);
    return;
  }
  std::vector<int> ids = *local_ids;
  std::sort(ids.begin(), ids.end());
  if (ids.empty() || std::adjacent_find(ids.begin(), ids.end()) != ids.end() || ids.front() < 0 ||
      ids.back() >= r.num_cpu_devices) {
    throw InvalidArgument(fmt::format(
        "local_device_ids [{}] must be distinct local hardware ids in 0..{} (this process has "
        "{} CPU devices; see num_cpu_devices / SPMD_CPU_DEVICES)",
        fmt::join(*local_ids, ", "), r.num_cpu_devices - 1, r.num_cpu_devices));
  }
  r.local_device_ids = std::move(ids);
}

// The timeouts, the auth token and where the service runs. A timeout left at its default is
// taken from the environment when set there.
void resolve_service_settings(const distributed::Options& options, const EnvReader& env,
                              bool read_env, ResolvedOptions& r) {
  auto env_seconds = [&](const char* field, const char* name, std::chrono::milliseconds given,
                         std::chrono::milliseconds default_value) {
    if (given.count() <= 0) {
      throw InvalidArgument(fmt::format("{} must be positive, got {} ms", field, given.count()));
    }
    if (given != default_value || !read_env) return given;
    return env.get_seconds(name).value_or(given);
  };
  const distributed::Options defaults;
  r.initialization_timeout =
      env_seconds("initialization_timeout", "SPMD_INITIALIZATION_TIMEOUT",
                  options.initialization_timeout, defaults.initialization_timeout);
  r.heartbeat_timeout = env_seconds("heartbeat_timeout", "SPMD_HEARTBEAT_TIMEOUT",
                                    options.heartbeat_timeout, defaults.heartbeat_timeout);
  r.shutdown_timeout = env_seconds("shutdown_timeout", "SPMD_SHUTDOWN_TIMEOUT",
                                   options.shutdown_timeout, defaults.shutdown_timeout);
  r.status_http =
      status_page_address(options.status_http.value_or(env.get("SPMD_STATUS_HTTP").value_or("")),
                          "status_http (SPMD_STATUS_HTTP)");
  r.preemption_signal = options.preemption_signal
                            ? checked_signal(*options.preemption_signal, "preemption_signal")
                        : read_env ? env_signal(env)
                                   : SIGTERM;
  r.auth_token =
      options.auth_token.value_or(read_env ? env.get("SPMD_AUTH_TOKEN").value_or("") : "");
  r.external_coordinator = options.external_coordinator.value_or(
      read_env ? env.get_bool("SPMD_EXTERNAL_COORDINATOR").value_or(false) : false);
}

// The three numbers of a multi-process cluster, all present and consistent, and the service's
// bind address.
void resolve_cluster(const distributed::Options& options, const EnvReader& env, bool read_env,
                     const ClusterArgs& a, ResolvedOptions& r) {
  std::vector<std::string> missing;
  if (!a.address) missing.push_back("coordinator_address (SPMD_COORDINATOR_ADDRESS)");
  if (!a.num_processes) missing.push_back("num_processes (SPMD_NUM_PROCESSES)");
  if (!a.process_id) missing.push_back("process_id (SPMD_PROCESS_ID)");
  if (!missing.empty()) {
    throw InvalidArgument(fmt::format(
        "initialize() is missing {}. Pass them in Options, set the environment variables, or "
        "start the processes with spmdrun, which sets them all",
        fmt::join(missing, ", ")));
  }
  if (*a.num_processes < 1) {
    throw InvalidArgument(
        fmt::format("num_processes must be at least 1, got {}", *a.num_processes));
  }
  if (*a.process_id < 0 || *a.process_id >= *a.num_processes) {
    throw InvalidArgument(
        fmt::format("process_id {} is outside 0..{}: process ids must be a dense range 0, 1, …, "
                    "num_processes-1",
                    *a.process_id, *a.num_processes - 1));
  }
  const HostPort coordinator = parse_host_port(*a.address, "coordinator_address");
  r.coordinator_address = *a.address;
  r.num_processes = *a.num_processes;
  r.process_id = *a.process_id;
  std::optional<std::string> bind = options.coordinator_bind_address;
  if (!bind && read_env) bind = env.get("SPMD_COORDINATOR_BIND_ADDRESS");
  if (bind) {
    parse_host_port(*bind, "coordinator_bind_address");
    r.bind_address = *bind;
  } else {
    r.bind_address = fmt::format("[::]:{}", coordinator.port);
  }
}

}  // namespace

ResolvedOptions resolve_options(const distributed::Options& options, const EnvReader& env) {
  const bool read_env =
      !(options.cluster_detection_method && *options.cluster_detection_method == "deactivate");
  const ClusterArgs args = cluster_args(options, env, read_env);
  ResolvedOptions r;
  r.source = args.source;
  const std::optional<std::string> requested = options.platforms ? options.platforms
                                               : read_env        ? env.get("SPMD_PLATFORMS")
                                                                 : std::nullopt;
  r.platform = choose_platform(requested, platform_support(names_gpu(requested)));
  resolve_devices(options, env, read_env, args, r);
  resolve_service_settings(options, env, read_env, r);
  if (!args.address && !args.num_processes && !args.process_id) {
    // JAX raises here too. Running alone instead would turn a launch whose environment was not
    // passed through into N independent "process 0 of 1" jobs writing the same checkpoints.
    throw InvalidArgument(
        "initialize() found no cluster: no coordinator_address, num_processes or process_id was "
        "given, and no launcher's environment (spmdrun, Slurm's srun, Open MPI's or MPICH's "
        "mpirun) was detected. Start the processes with one of those launchers, or pass "
        "coordinator_address, num_processes and process_id (SPMD_COORDINATOR_ADDRESS, "
        "SPMD_NUM_PROCESSES, SPMD_PROCESS_ID). To run one process alone, pass num_processes = 1 "
        "(SPMD_NUM_PROCESSES=1), or do not call initialize()");
  }
  if (args.num_processes && *args.num_processes == 1 && !args.address &&
      args.process_id.value_or(0) == 0) {
    r.single_process = true;
    return r;
  }
  resolve_cluster(options, env, read_env, args, r);
  return r;
}

}  // namespace spmd
