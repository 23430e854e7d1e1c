// The coordination service's barriers: the state and its rules, without networking or clocks.
//
// A process's n-th arrival at barrier `id` meets the other participants' n-th arrivals (an
// "instance"), so an id can be reused in a loop. An instance completes when every participant
// has arrived; it fails when the service expires it (a waiter's deadline passed) or when a
// participant dies, and every waiter, present and late, then gets the same error. Not
// thread-safe: the service calls it from its one event loop thread.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "coord/status.h"

namespace spmd {

class BarrierTable {
 public:
  using Done = std::function<void(const Status&)>;

  // Identifies one instance, for expire().
  struct InstanceKey {
    std::string id;
    uint64_t generation = 0;
  };

  // `num_processes` is the cluster size; participant lists are checked against it.
  explicit BarrierTable(int num_processes) : num_processes_(num_processes) {}

  // `settled` runs whenever a pending instance completes or fails, after its waiters were told
  // (the service drops the instance's deadline timer then). It must not call into this table.
  void on_settled(std::function<void(const InstanceKey&)> settled) {
    settled_ = std::move(settled);
  }

  // Records `process` arriving at its next instance of `id` with the given participants (all
  // processes when empty). `done` runs exactly once: at once on an error (this process is
  // already waiting on `id`, is not a participant, lists other participants than the earlier
  // arrivals, or comes late to an instance that failed), or when the instance completes or
  // fails. Returns the instance's key while it is pending (for expire()), else nullopt.
  std::optional<InstanceKey> arrive(const std::string& id, int process,
                                    const std::vector<int>& participants, Done done);

  // Fails the instance, if still pending, with DeadlineExceeded naming who did not arrive.
  // `waited` describes the deadline for the message, e.g. "5s"; `now`, given the missing ids,
  // returns what they are doing, appended to the message.
  using Describe = std::function<std::string(const std::vector<int>& missing)>;
  void expire(const InstanceKey& key, const std::string& waited, const Describe& now = {});

  // The participants of a pending instance that have not arrived, ascending; empty when it is
  // not pending. O(N).
  std::vector<int> missing(const InstanceKey& key) const;

  // How many times `process` has arrived at `id`: its next arrival is instance number this.
  uint64_t arrivals(const std::string& id, int process) const;

  // Fails every pending instance that has `process` as a participant with `message`.
  void fail_process(int process, StatusCode code, const std::string& message);

  size_t pending_count() const;

 private:
  struct Instance {
    // Sorted; empty means every process (never materialised: a barrier of all N processes costs
    // O(log N) per arrival, not O(N)).
    std::vector<int> participants;
    std::map<int, Done> waiters;  // arrived processes
    bool failed = false;
    Status failure;
  };
  void fail(const std::string& id, uint64_t generation, Instance& instance, const Status& status);
  bool is_participant(const Instance& instance, int process) const;
  size_t participant_count(const Instance& instance) const;
  std::string describe(const std::vector<int>& participants) const;

  void settle(const std::string& id, uint64_t generation) {
    if (settled_) settled_(InstanceKey{id, generation});
  }

  int num_processes_;
  std::function<void(const InstanceKey&)> settled_;
  // id -> generation -> instance. Completed instances are erased; failed ones are kept so that
  // late arrivals get the same error.
  std::map<std::string, std::map<uint64_t, Instance>> instances_;
  // (id, process) -> number of arrivals so far.
  std::map<std::pair<std::string, int>, uint64_t> arrivals_;
};

// "1, 3, 7" — at most `limit` ids, then "… and N more".
std::string format_process_list(const std::vector<int>& ids, size_t limit = 64);

}  // namespace spmd
