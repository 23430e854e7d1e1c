// The part of a communicator one process holds: the group's layout, the links to the other
// processes and the exchange engine over them (made by create(), whose steps are GroupSetup in
// group_setup.cc), and the lock its local participants wait on. What else a group keeps has a
// type of its own: the participants' meeting point (LocalRendezvous), same-process point-to-point
// messages (LocalMailbox), split results (SplitResults); running a call is run_call() (call.h).
// Shared by the Communicator handles of the local participants.
//
// Thread-safe: each local participant calls from its own thread. A collective runs once per
// process: the last local participant to arrive executes it for all (they combine through
// memory before anything crosses processes), the others wait for it. A call that fails for any
// reason other than bad arguments leaves the streams in an unknown state, so the group closes:
// later calls throw FailedPrecondition naming the first failure.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "comm/call.h"
#include "comm/exchange.h"
#include "comm/group_layout.h"
#include "comm/local_assist.h"
#include "comm/local_mailbox.h"
#include "comm/local_rendezvous.h"
#include "comm/peer_link.h"
#include "comm/request.h"
#include "comm/shm_segment.h"
#include "comm/split_results.h"
#include "runtime/runtime_state.h"
#include "spmd/communicator.h"

namespace spmd {

class ProcessGroup {
 public:
  // Creates the group of `devices` (rank order) with id `id`: collective among the processes
  // owning those devices, through the coordination service (shm segments and TCP endpoints are
  // exchanged there). Throws like make_group_layout(), DeadlineExceeded after
  // handles.setup_timeout, spmd::Error when a link cannot be set up.
  static std::shared_ptr<ProcessGroup> create(std::span<const int> devices, uint64_t id,
                                              const CommHandles& handles);
  ~ProcessGroup();

  const GroupLayout& layout() const { return layout_; }
  // The transports of its links joined by "+" ("shm", "tcp", "shm+ucx", …), or "local" (one
  // process), for benchmark rows and logs.
  std::string transports() const;

  // Closes the group for every local participant: waiting and later calls throw
  // FailedPrecondition quoting `why` (Communicator::close).
  void abandon(const std::string& why);

  // Runs one collective for local participant `local` (index into layout().local_ranks).
  void run(int local, const Request& request);

  // Point-to-point: `local` sends to / receives from group rank `peer`. Matched in program order
  // per (sender, receiver) pair; on one process they go through memory.
  void send(int local, int peer, DType dtype, const void* data, uint64_t count);
  void recv(int local, int peer, DType dtype, void* data, uint64_t count);

  // The number of split() calls local participant `local` made before this one.
  uint64_t next_split(int local) {
    std::lock_guard lock(mu_);
    return splits_.next_split(local);
  }

  // The split results meeting point (communicator.cc): the communicator the lowest local
  // participant of a colour created, handed to its local peers of that colour.
  std::shared_ptr<ProcessGroup> split_result(
      uint64_t split, int color, const std::function<std::shared_ptr<ProcessGroup>()>& make,
      bool maker);

 private:
  friend class GroupSetup;  // the steps of create() (group_setup.cc)

  ProcessGroup(GroupLayout layout, CommHandles handles);
  Fingerprint fingerprint(uint64_t sequence, const Request& request) const;
  Fingerprint p2p_fingerprint(DType dtype, int sender, uint64_t count) const;
  // Waits on cv_ (under `lock`) until done(). Every kLocalWaitSlice it checks the abort flag (a
  // dead peer or service ends the wait with PeerFailure) and whether the group closed, and once
  // `until` has passed it calls expired(), which throws to end the wait or returns to go on.
  // A template (defined in process_group.cc, its only user): the rendezvous waits on every call
  // of a process with several local participants, and std::function would allocate there.
  template <class Done, class Expired>
  void wait_locally(std::unique_lock<std::mutex>& lock, Done done,
                    std::optional<Waiter::Clock::time_point> until, Expired expired);
  // A participant that arrived before the last: waits (under `lock`) until the call it arrived
  // at, `generation`, completes, and rethrows the runner's error.
  void wait_for_runner(std::unique_lock<std::mutex>& lock, const Fingerprint& fp,
                       uint64_t generation);
  void execute(const Fingerprint& fp, std::span<const Request> requests);
  // execute() with engine_mu_ held.
  void execute_locked(const Fingerprint& fp, std::span<const Request> requests);
  // One message to (`out`) or from (`in`) the process at `position`, for send/recv.
  void point_to_point(const Fingerprint& fp, int position, const void* out, void* in, size_t bytes);
  void throw_if_closed() const;
  void close(const std::string& why);
  std::optional<Waiter::Clock::time_point> deadline() const;
  std::string describe_local(int local) const;
  // The coordination client for the abort flag: null for a group inside one process; throws
  // FailedPrecondition once the runtime has shut down.
  std::shared_ptr<CoordClient> coord() const;

  GroupLayout layout_;
  // Without `coord`, which the group holds weakly (coord_): a communicator a user keeps past
  // shutdown() must not keep the client alive past the io thread it runs on.
  CommHandles handles_;
  std::weak_ptr<CoordClient> coord_;
  bool multi_process_ = false;
  std::optional<std::chrono::nanoseconds> timeout_;

  // Links and the engine: used under engine_mu_.
  std::mutex engine_mu_;
  std::vector<PeerLink> links_;
  std::vector<ShmSegment> segments_;  // mine and the peers' I write into
  uint64_t probe_word_ = 0;           // read by same-host peers to test single-copy reads
  std::unique_ptr<Exchange> exchange_;
  Scratch scratch_;

  // Local rendezvous (under mu_).
  std::mutex mu_;
  std::condition_variable cv_;
  LocalRendezvous rendezvous_;
  // Parts of the runner's call, taken by the participants waiting for it (in wait_locally).
  LocalAssist assist_;
  std::string closed_;  // why the group closed, or empty
  // closed_ is not empty: read without mu_ on the one-participant path.
  std::atomic<bool> closed_flag_{false};

  // Point-to-point sequence numbers and same-process messages (under mu_).
  LocalMailbox mailbox_;

  // Split results (under mu_).
  SplitResults splits_;
};

}  // namespace spmd
