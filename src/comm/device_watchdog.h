// The watchdog of a device communicator (device_collectives.h): what turns a GPU collective that
// will never finish into an error naming who did not take part, instead of the silent hang a
// GPU job otherwise has (jax#38503: a rank that stays alive but stops taking part hangs every
// other GPU rank forever).
//
// Each collective queued on the communicator (and its creation, which waits for every rank to
// join) is registered with a deadline and a probe that says, without blocking, whether it has
// finished (on a GPU, an event recorded after it on the stream). check() looks, in this order, at
// peers the coordination service reported dead, the communicator's asynchronous error, each
// pending collective's completion, and each one's deadline. The first failure trips the watchdog:
// - a dead peer: PeerFailure naming it and what it was doing, at once, before any deadline;
// - an asynchronous error: PeerFailure when the library says a peer or the network failed, else
//   Error, with the library's message;
// - a deadline: DeadlineExceeded naming the collective, the time it waited and, when the
//   `missing` probe can say, the ranks that never arrived.
// Tripping aborts the communicator, so the queued kernels end rather than spin; every later
// communicator() call throws the recorded error until rebuild() installs a new communicator.
//
// check() takes the time from its caller: the watchdog's own thread (start()) calls it every few
// milliseconds with the steady clock; the tests call it with times of their own. Thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "comm/device_collectives.h"

namespace spmd {

class DeviceWatchdog {
 public:
  using Clock = std::chrono::steady_clock;
  // The ranks that have not yet arrived at the collective with this sequence number (from the
  // coordination service's view of the job); empty when unknown.
  using MissingRanks = std::function<std::vector<int>(uint64_t sequence)>;

  // Guards `comm`, each collective given `deadline` to finish. `who` names this process in
  // messages ("process 3 on host h").
  DeviceWatchdog(std::unique_ptr<DeviceCommunicator> comm, Clock::duration deadline,
                 std::string who, MissingRanks missing = {});
  ~DeviceWatchdog();
  DeviceWatchdog(const DeviceWatchdog&) = delete;
  DeviceWatchdog& operator=(const DeviceWatchdog&) = delete;

  // The communicator to queue on; throws the recorded error once the watchdog has tripped.
  DeviceCommunicator& communicator();

  // Registers collective number `sequence`, described by `what` ("all_reduce of 4 MiB float32"),
  // queued at `now`; `done` says without blocking whether it has finished.
  void queued(uint64_t sequence, std::string what, std::function<bool()> done,
              Clock::time_point now);
  // The coordination service reports rank `rank` (`who`) dead while doing `doing`; a rank < 0
  // when the report names a process rather than a rank (`who` is then the whole report).
  void peer_failed(int rank, std::string who, std::string doing);

  // One round of checks at `now`; true when the watchdog tripped in this round.
  bool check(Clock::time_point now);
  // Runs check() every `period` on a thread of the watchdog's until it is destroyed.
  void start(Clock::duration period);

  bool tripped() const;
  // The recorded error (the watchdog must have tripped).
  [[noreturn]] void rethrow() const;
  // Collectives registered and not yet finished.
  size_t pending() const;
  // After a trip: guards `fresh` instead, with no pending collectives and no error.
  void rebuild(std::unique_ptr<DeviceCommunicator> fresh);

 private:
  struct Pending {
    uint64_t sequence;
    std::string what;
    std::function<bool()> done;
    Clock::time_point queued_at;
  };
  struct DeadPeer {
    int rank;
    std::string who, doing;
  };

  // Aborts the communicator and records `error`; mutex_ held.
  void trip(std::exception_ptr error);
  std::exception_ptr first_failure(Clock::time_point now);
  std::string deadline_message(const Pending& p, Clock::time_point now) const;

  mutable std::mutex mutex_;
  std::unique_ptr<DeviceCommunicator> comm_;
  Clock::duration deadline_;
  std::string who_;
  MissingRanks missing_;
  std::vector<Pending> pending_;
  std::vector<DeadPeer> dead_;
  std::exception_ptr error_;

  std::condition_variable stop_signal_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace spmd
