// The cluster's members as the coordination service sees them: one slot per process id and the
// state it is in, without sockets, timers or clocks.
//
//   kEmpty --register--> kPending --form (all pending)--> kLive --shutdown()--> kLeaving
//   kPending --release (timeout, disconnect)--> kEmpty       kLeaving --barrier done--> kLeft
//   kLive or kLeaving --death (disconnect, silence)--> kDead
//
// Every query is O(1) (counters kept beside the slots) except missing(), which walks every slot
// and is only called on a registration timeout. That matters at scale: the service asks "is
// anyone still running?" and "is the cluster finished?" once per shutdown and per death, and
// with a walk per question a cluster of N processes would pay N^2.
//
// Not thread-safe: the service calls it from its one event-loop thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "protocol.pb.h"

namespace spmd {

enum class MemberState { kEmpty, kPending, kLive, kLeaving, kLeft, kDead };

// What a process said about itself when it registered.
struct MemberInfo {
  std::string host_id;
  std::string hostname;
  int64_t pid = 0;
  std::vector<wire::DeviceInfo> devices;
};

class Membership {
 public:
  // `num_processes` must be at least 1 (the service checks it first).
  explicit Membership(int num_processes);

  int size() const { return static_cast<int>(slots_.size()); }
  MemberState state(int process) const { return slots_[process].state; }
  const MemberInfo& info(int process) const { return slots_[process].info; }
  // "process 3 (host h, pid 42)", for messages and logs.
  std::string describe(int process) const;

  // Registration. register_pending requires state kEmpty and a cluster not yet formed; it
  // returns true when this registration makes every process pending (time to form()).
  bool register_pending(int process, MemberInfo info);
  // Back to kEmpty (the registration timed out or its connection dropped before forming).
  void release_pending(int process);
  // Every process kPending -> kLive. Requires pending_count() == size().
  void form();
  bool formed() const { return formed_; }
  int pending_count() const { return count(MemberState::kPending); }
  // Processes that have not registered (or whose registration was released).
  int unregistered_count() const { return count(MemberState::kEmpty); }
  // The ids still kEmpty, ascending. O(N).
  std::vector<int> missing() const;

  // A live process called shutdown(): kLive -> kLeaving. False (nothing changes) otherwise.
  bool begin_leaving(int process);
  // kLeaving -> kLeft once its shutdown barrier answered. False when it is not leaving.
  bool finish_leaving(int process);
  // The first process (in time) to have called shutdown(), if any has.
  std::optional<int> first_gone() const { return first_gone_; }
  bool has_left(int process) const;  // kLeaving or kLeft

  // A live or leaving process died -> kDead. False (nothing changes) in any other state.
  bool mark_dead(int process);
  // The first process to have died, if any has.
  std::optional<int> first_dead() const { return first_dead_; }

  // kLive or kLeaving: the process is connected and the service still answers it.
  bool active(int process) const;
  // Processes in kLive: while any remains, the shutdown barrier is not complete.
  int live_count() const { return count(MemberState::kLive); }
  // Formed, and every process has left or died.
  bool finished() const;

 private:
  struct Slot {
    MemberState state = MemberState::kEmpty;
    MemberInfo info;
  };
  static constexpr int kStates = 6;

  int count(MemberState s) const { return counts_[static_cast<int>(s)]; }
  void move(int process, MemberState to);

  std::vector<Slot> slots_;
  int counts_[kStates] = {};
  bool formed_ = false;
  std::optional<int> first_gone_;
  std::optional<int> first_dead_;
};

}  // namespace spmd
