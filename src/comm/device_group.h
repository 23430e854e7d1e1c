// One group's collectives on device memory, as the runtime runs them: the group's device
// communicator (device_collectives.h) made through the key-value store (device_comm_bootstrap.h)
// and kept under a watchdog (device_watchdog.h), in place of staging device buffers through the
// host engine. It is what turns a GPU job's collective that will never finish into an error
// naming the collective and the process, rather than the silent hang of jax#38503.
//
// Each call, on this rank:
// - makes the communicator on first use, and again after the watchdog tripped (a new generation,
//   with a fresh id, so the ranks that go on rebuild together);
// - checks the first call of each generation against every rank's through the key-value store,
//   so that processes running different programs get CollectiveMismatch naming both calls
//   instead of a device collective that never matches up (later calls are not checked: a
//   mismatch there is a collective that never finishes, which the deadline names);
// - queues the collective on the device's stream, registers it with the watchdog (its probe is
//   the backend's fence), and waits for it: it returns once the result is in `out`, or throws
//   the watchdog's error (DeadlineExceeded at the deadline, PeerFailure once the coordination
//   service reports a peer dead, Error for the library's asynchronous error). An error the
//   watchdog found between calls is thrown by the next call; each trip is thrown once, and the
//   call after it rebuilds.
// Used by one thread at a time (the device's thread), as the seam says; it starts no thread of
// its own unless asked (DeviceGroupConfig::period).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "comm/device_comm_bootstrap.h"
#include "comm/device_comm_factory.h"
#include "comm/device_watchdog.h"
#include "spmd/communicator.h"

namespace spmd {

// Where the group's device work is queued and how to know when it is done: the device's
// backend's stream and fence (kernels/backend.h).
struct DeviceQueue {
  void* stream = nullptr;
  std::function<std::function<bool()>()> fence;
};

struct DeviceGroupConfig {
  // How long creation, the first-call check and each collective may take.
  std::chrono::milliseconds deadline{std::chrono::minutes(10)};
  std::string who;  // this process in messages ("process 3 on host h")
  // The key-value store of the job; may be null for a group of one rank.
  distributed::Client* client = nullptr;
  // Whether the coordination service reported a peer dead, with its report: polled while a
  // collective is waited for.
  std::function<bool(std::string* report)> peer_dead;
  // What the other processes are doing now (" Now: process 2 … is in …"), appended to a
  // DeadlineExceeded so that it says where the missing process is; may be empty.
  std::function<std::string()> describe_others;
  // The live view (coord/activity.h): a wait that lasts is shown as this process being in the
  // call (show_wait returns what ends the showing), and each finished call is noted. May be
  // empty.
  std::function<std::function<void()>(const std::string& call)> show_wait;
  std::function<void(const char* op, uint64_t sequence)> finished;
  // The group's processes (rank order), for bootstrap messages.
  std::vector<int> processes;
  // How often a thread of the watchdog's checks between calls; 0, the default, starts none. A
  // call waits for its collective and checks on its own, every millisecond or sooner, so
  // nothing is pending between calls for a thread to find (a failure then, such as a peer's
  // death, is the next call's error). Calls that return before their collectives finish will
  // need the thread.
  std::chrono::milliseconds period{0};
};

class DeviceGroup {
 public:
  // The collectives of `host`'s ranks on device memory `memory`, through `factory`'s
  // communicators; nothing is made before the first call.
  DeviceGroup(Communicator host, MemorySpace memory, const DeviceCommFactory& factory,
              DeviceQueue queue, DeviceGroupConfig config);
  ~DeviceGroup();
  DeviceGroup(const DeviceGroup&) = delete;
  DeviceGroup& operator=(const DeviceGroup&) = delete;

  // The seam's collectives (device_collectives.h's counts), on device buffers of `memory`.
  void all_reduce(const void* in, void* out, size_t count, DType dtype, ReduceOp op);
  void all_gather(const void* in, void* out, size_t count, DType dtype);
  void reduce_scatter(const void* in, void* out, size_t count, DType dtype, ReduceOp op);

  int rank() const { return host_.rank(); }
  int size() const { return host_.size(); }
  // The communicator's generation: 0, one more per rebuild after a trip; -1 before the first.
  int64_t generation() const { return made_ ? static_cast<int64_t>(group_.generation) : -1; }
  // Collectives that completed through the device communicator.
  uint64_t completed() const { return completed_; }
  // Whether the communicator moves `dtype` (else the caller stages the collective).
  bool carries(DType dtype) const { return factory_.supports(dtype); }
  // The factory's name ("NCCL 2.28.9").
  std::string library() const { return factory_.name(); }

 private:
  // Runs one collective described by `call`: `enqueue` queues it on the communicator.
  void run(Fingerprint call, const std::function<void(DeviceCommunicator&)>& enqueue);
  // Makes the communicator of the next generation (the first, or after a trip).
  void open();
  // Waits until `done` says finished or the watchdog trips (then throws its error).
  // `shown` is how the wait appears in the live view once it has lasted.
  void wait(const std::function<bool()>& done, const std::string& what, const std::string& shown);
  // Throws the watchdog's error, once per trip, with what the others are doing when it is a
  // deadline.
  [[noreturn]] void report_failure();

  Communicator host_;
  MemorySpace memory_;
  const DeviceCommFactory& factory_;
  DeviceQueue queue_;
  DeviceGroupConfig config_;
  DeviceCommGroup group_;
  bool made_ = false;
  bool first_checked_ = false;
  bool failure_reported_ = false;  // the watchdog's error has been thrown to a caller
  uint64_t sequence_ = 0;          // calls in this generation
  uint64_t completed_ = 0;
  std::unique_ptr<DeviceWatchdog> watchdog_;
};

}  // namespace spmd
