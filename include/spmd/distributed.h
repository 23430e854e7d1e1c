// spmd::distributed — joining a cluster of processes (jax.distributed).
//
// Every process of a cluster calls initialize() once, before it queries devices. Process 0 runs
// the coordination service (unless Options::external_coordinator says spmd-coordinator does);
// every process, 0 included, registers with it, and returns from initialize() when all have
// registered and agreed on the global device list. From then on the service watches every
// process: when one dies (its connection drops, or it is silent for heartbeat_timeout), every
// other process hears of it and, by default, prints one line naming the dead process, its host
// and pid, and exits with kPeerFailureExitCode.
//
// initialize(), shutdown() and is_initialized() are safe to call from any thread, but a program
// should call initialize() and shutdown() once each, from one thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "spmd/coordination_client.h"

namespace spmd::distributed {

// What a process learns about a dead peer.
struct PeerFailureInfo {
  int process_id = -1;  // -1 when the coordination service itself died.
  std::string host;     // The dead process's hostname.
  int64_t pid = 0;
  std::string reason;  // E.g. "connection lost", "no heartbeat for 2s".
  // One line for a log: "process 2 (host h1, pid 4242) failed: connection lost".
  std::string to_string() const;
};

// The exit code of a process that stops because a peer died (with no on_peer_failure set).
inline constexpr int kPeerFailureExitCode = 70;

// How to join the cluster. Every field may be left out; what is left out is read from the
// environment (see initialize()). Designated initialisers read like JAX:
//   initialize({.coordinator_address = "10.0.0.1:1234", .num_processes = 2, .process_id = 0});
struct Options {
  // "host:port" of process 0's coordination service: an IPv4 address, an IPv6 address in
  // brackets ("[fe80::1]:1234"), or a host name. Env: SPMD_COORDINATOR_ADDRESS.
  std::optional<std::string> coordinator_address;
  // The number of processes in the cluster. Env: SPMD_NUM_PROCESSES.
  std::optional<int> num_processes;
  // This process's id, in 0 … num_processes-1. Env: SPMD_PROCESS_ID.
  std::optional<int> process_id;
  // Restricts this process's visible devices to these local hardware ids. Env:
  // SPMD_LOCAL_DEVICE_IDS ("0,2").
  std::optional<std::vector<int>> local_device_ids;
  // Which environment to read arguments from: "env" (the SPMD_* variables spmdrun sets),
  // "slurm" (srun), "ompi" (Open MPI's mpirun), "mpich" (MPICH's mpiexec), "k8s" (a pod of an
  // indexed Kubernetes Job; the count comes from the API server), or "deactivate" (read nothing;
  // every argument must be given). Naming one whose variables are absent is an error listing
  // them. Unset: the first present, in that order.
  std::optional<std::string> cluster_detection_method;
  // How long registration may take, from connecting to the service to all processes having
  // registered. JAX's default. Env: SPMD_INITIALIZATION_TIMEOUT (seconds).
  std::chrono::milliseconds initialization_timeout = std::chrono::seconds(300);
  // A process silent for this long is dead; the heartbeat interval is a tenth of it (at most
  // 10 s). Env: SPMD_HEARTBEAT_TIMEOUT (seconds).
  std::chrono::milliseconds heartbeat_timeout = std::chrono::seconds(100);
  // How long shutdown() waits at its barrier for the other processes. Env:
  // SPMD_SHUTDOWN_TIMEOUT (seconds).
  std::chrono::milliseconds shutdown_timeout = std::chrono::seconds(300);
  // Where process 0's service listens. Default: every interface ("[::]") on the port of
  // coordinator_address. Env: SPMD_COORDINATOR_BIND_ADDRESS.
  std::optional<std::string> coordinator_bind_address;
  // How many CPU devices this process owns (each is host memory plus a worker thread, with the
  // helpers of cpu_threads_per_device). Default 1.
  // Env: SPMD_CPU_DEVICES.
  std::optional<int> num_cpu_devices;
  // How many threads each CPU device computes with: its own and helpers that share its
  // products, element-wise passes and reductions (results do not depend on the count). Default:
  // the cores this process may use (its CPU affinity and cgroup quota) divided among its CPU
  // devices and the other processes of this host, at least 1. Env: SPMD_CPU_THREADS_PER_DEVICE.
  std::optional<int> cpu_threads_per_device;
  // The platforms this process's devices may run on, in order of preference, comma-separated:
  // "cpu", "gpu" ("cuda" is taken for "gpu"), as JAX's JAX_PLATFORMS. The first one this process
  // has wins; none of them here is an InvalidArgument saying why. Default: GPUs when there are
  // any, else CPU. "gpu" loads the CUDA plugin (libspmd_cuda; README, "GPUs"), and is refused,
  // saying why, where it cannot be loaded or sees no GPU. Env: SPMD_PLATFORMS.
  std::optional<std::string> platforms;
  // A shared secret; the service refuses processes that present a different one. Env:
  // SPMD_AUTH_TOKEN.
  std::optional<std::string> auth_token;
  // True when the service runs stand-alone (spmd-coordinator): process 0 is then only a client.
  // Env: SPMD_EXTERNAL_COORDINATOR=1.
  std::optional<bool> external_coordinator;
  // How long any wait for the other processes may take before it fails naming who did not
  // arrive: collectives, communicator creation, the jit program check, sync_global_devices and
  // checkpoint commits without a timeout of their own. Zero: no limit. Env:
  // SPMD_COLLECTIVE_TIMEOUT (seconds). Default 10 minutes (PyTorch's process-group default):
  // long enough for a slow step or a large checkpoint, far shorter than forever.
  std::optional<std::chrono::milliseconds> collective_timeout;
  // How processes reach each other: "auto" (the default: shared memory within a host; across
  // hosts UCX when this build has it and UCX finds a fabric other than TCP — InfiniBand, RoCE —
  // else spmd's own TCP), "tcp" (spmd's TCP everywhere) or "ucx" (UCX everywhere; UCX's own
  // variables, UCX_TLS and UCX_NET_DEVICES, choose its paths). Env: SPMD_TRANSPORT.
  std::optional<std::string> transport;
  // The signal that announces a preemption to multihost::reached_preemption_sync_point (Slurm
  // and spot instances send SIGTERM). Env: SPMD_PREEMPTION_SIGNAL (a number, or a name: TERM,
  // INT, HUP, USR1, USR2). Default SIGTERM.
  std::optional<int> preemption_signal;
  // Serve the live status page (who waits for whom, refreshed every second) from process 0's
  // coordination service at this "ip:port", or on 127.0.0.1 when only a port is given. Off by
  // default. The page needs ?token=<auth_token> when the job has one; process 0 prints its
  // address at initialize(). Env: SPMD_STATUS_HTTP.
  std::optional<std::string> status_http;
  // Called (on a runtime thread) when a peer dies, instead of exiting. Blocked and later calls
  // into the runtime then throw PeerFailure.
  std::function<void(const PeerFailureInfo&)> on_peer_failure;
};

// Joins the cluster. Fields of `options` left unset are read from the environment named by
// cluster_detection_method (spmdrun's SPMD_* variables, or a launcher's). num_processes = 1
// (SPMD_NUM_PROCESSES=1) runs the process alone: one process, no service. When no coordinator
// address, process count or process id is given or detected at all, it throws InvalidArgument,
// as JAX does, saying what to pass or which launcher to use: running alone then would turn a
// misconfigured multi-host launch into N independent "process 0 of 1" jobs. A program that never
// calls initialize() runs alone, as in JAX.
//
// Throws FailedPrecondition when called twice or after devices were queried; InvalidArgument for
// a bad or missing argument (the message names it and where it can come from); DeadlineExceeded
// when the service cannot be reached, or not every process registers, within
// initialization_timeout (naming the address and who did register); AlreadyExists when another
// live process already holds this process id (naming its host and pid); PermissionDenied for a
// wrong auth token. On failure nothing stays initialised and initialize() may be called again.
void initialize(const Options& options = {});

// Leaves the cluster: waits at a shutdown barrier (shutdown_timeout) so that process 0 does not
// take the service away from processes still using it, then disconnects. Called automatically
// at normal exit. A no-op when not initialised. Throws DeadlineExceeded when the barrier times
// out (after leaving anyway).
void shutdown();

// True between a successful initialize() and shutdown().
bool is_initialized();

// Takes this process out of the cluster at once, for a user's interrupt (Ctrl-C): every call of
// this process that waits for the others — collectives, barriers, jit's and shard_map's
// collectives, checkpoint commits — throws PeerFailure carrying `reason` within one wait slice
// (about 100 ms), now or later, and the connection to the coordination service closes, so the
// other processes learn of it as of any process's failure (PeerFailure naming this process, or
// their exit; see Options::on_peer_failure). Computation that waits for nothing runs on to its
// end. The process cannot take part again: it should exit. A no-op when not initialised or
// running alone. Thread-safe, but not async-signal-safe: call it from a thread that watches for
// the signal (the Python package does, through Python's signal wakeup fd).
void interrupt(const std::string& reason);

// The coordination service's client. Throws FailedPrecondition when not initialised or when
// this process runs alone.
Client& client();

}  // namespace spmd::distributed
