// The process-global runtime state: the only global mutable state of spmd (STYLE.md). Guarded by
// its mutex; initialize()/shutdown() replace it wholesale, device queries read a snapshot.
// Open to lib/: spmd::numpy's eager functions keep their compiled programs per session.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <typeindex>
#include <typeinfo>
#include <vector>

#include "runtime/comm_options.h"
#include "spmd/device.h"

namespace spmd {

class CoordClient;

// What the device queries return.
struct DeviceView {
  int process_index = 0;
  int process_count = 1;
  std::vector<Device> devices;
  std::vector<Device> local_devices;
};

// The view of the initialised cluster, or, before initialize(), of this process alone; taking
// it before initialize() marks the runtime as used so that a later initialize() is refused.
std::shared_ptr<const DeviceView> current_device_view();

// What the collectives engine needs from the runtime, taken once per communicator.
struct CommHandles {
  std::shared_ptr<const DeviceView> view;
  // The coordination client, for rendezvous and the abort flag; null when the process runs
  // alone (before initialize(), or initialized as a single process).
  std::shared_ptr<CoordClient> coord;
  // An IP address of this host that the others reach (the local end of the connection to the
  // coordination service); empty when the process runs alone.
  std::string data_address;
  // How long communicator creation waits for the other processes.
  std::chrono::milliseconds setup_timeout{std::chrono::minutes(5)};
  // The engine's settings (transport, rings, timeouts), read once per session.
  CommOptions options;
};
CommHandles comm_handles();

// How long a wait for the other processes without a deadline of its own may take: the job's
// collective timeout (distributed::Options::collective_timeout, SPMD_COLLECTIVE_TIMEOUT; ten
// minutes by default), or a year when it is set to no limit.
std::chrono::milliseconds wait_timeout();

// The signal announcing a preemption (distributed::Options::preemption_signal): the initialised
// cluster's setting, SIGTERM before initialize() or when running alone without it.
int preemption_signal();

// The threads per CPU device asked for (distributed::Options::cpu_threads_per_device,
// SPMD_CPU_THREADS_PER_DEVICE), or 0: divide the cores (cpu_threads.h).
int requested_cpu_threads_per_device();

// The runtime session's object of type T: one per type and session, default-constructed on first
// use, dropped by distributed::shutdown() before the coordination client goes (so what it owns —
// sockets, shared memory — closes while the cluster is still there). The layers above keep
// their per-job state here (the collectives engine's world communicator and group registry,
// shard_map's device threads, counters that number collective calls), the one place global
// state may live (STYLE.md). T's constructor runs under the runtime's lock: it must not call
// back into the runtime. Give each use a type of its own (not, say, std::atomic<uint64_t>),
// since the type is the key.
template <class T>
std::shared_ptr<T> session_object();

// The untyped slot behind session_object<T>(): the object stored under `type`, made by `make`
// when absent.
std::shared_ptr<void> session_slot(std::type_index type,
                                   const std::function<std::shared_ptr<void>()>& make);

// The session's number: it changes whenever shutdown() drops the session's objects, so a copy
// kept under an older number is not the session's any more.
uint64_t session_generation();

template <class T>
std::shared_ptr<T> session_object() {
  // Each thread keeps what it got last for the session that made it: every jit call asks for
  // several of these, and session_slot takes the runtime's lock and searches a map.
  thread_local uint64_t kept_generation = 0;
  thread_local std::weak_ptr<T> kept;
  const uint64_t generation = session_generation();
  if (kept_generation == generation) {
    if (std::shared_ptr<T> there = kept.lock()) return there;
  }
  // The key is T itself, so the slot holds a T: the cast cannot be wrong.
  std::shared_ptr<T> made = std::static_pointer_cast<T>(
      session_slot(std::type_index(typeid(T)), [] { return std::make_shared<T>(); }));
  kept = made;
  kept_generation = generation;
  return made;
}

}  // namespace spmd
