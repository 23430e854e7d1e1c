// The live view of a cluster: per process, what it is doing now, as the coordination service
// knows it. Not thread-safe: the service's event loop owns it.
//
// Two sources feed it. Waits the service sees itself: a barrier or a blocking key-value get,
// from the request's arrival to its answer. And what processes report (activity.h): a
// collective that has waited longer than a few milliseconds, with the peers that have not
// arrived, and the last call they finished. A service-side wait shows first; a process in no
// wait is "running its own code" since its last reported call.
//
// Costs: O(1) per report and per wait, with nothing formatted or computed until a table is
// asked for (a barrier of every process passes through enter_barrier N times); table() is
// O(N + the waits' lists), asked for only by spmd-status, the web page and a timeout's error.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "coord/barrier_table.h"
#include "coord/membership.h"
#include "coord/wire.h"

namespace spmd {

class StatusBoard {
 public:
  using Clock = std::chrono::steady_clock;

  // `num_processes` at least 1.
  explicit StatusBoard(int num_processes);

  // What `process` said it is doing (a heartbeat's, or an activity message).
  void report(int process, const wire::Activity& activity, Clock::time_point now);

  // A service-side wait of `process` begins: its arrival at instance `generation` of barrier `id`
  // (who is missing comes from the barrier table when a table is made), or a blocking get of
  // `key`, which waits for no one in particular. Returns the token for leave_wait().
  uint64_t enter_barrier(int process, const std::string& id, uint64_t generation,
                         Clock::time_point now);
  uint64_t enter_key_value_get(int process, const std::string& key, Clock::time_point now);
  void leave_wait(int process, uint64_t token);

  // The process died; `reason` is what the service told the others.
  void dead(int process, std::string reason);

  // What table() needs from the rest of the service.
  struct Context {
    const Membership& members;
    const BarrierTable& barriers;
    // When the service last heard from a process (a message of any kind); nullopt: never.
    std::function<std::optional<Clock::time_point>(int)> last_heard;
  };
  wire::StatusTable table(const Context& context, Clock::time_point now) const;
  // table() in pieces, for a caller on an event loop that answers others in between: appends
  // rows [first, last) to `table` (whose num_processes is set), counting in `waited` (one per
  // process) how many wait for each; finish_table() then sets waited_for_by from the counts.
  void add_rows(wire::StatusTable& table, int first, int last, const Context& context,
                Clock::time_point now, std::vector<int>& waited) const;
  static void finish_table(wire::StatusTable& table, const std::vector<int>& waited);

  // One clause about a row, for errors and spmd-status: "process 3 (host b, pid 77) is in
  // barrier 'epoch-end' since 41 s", "… has been running its own code since it finished
  // all_reduce #881, 600 s ago", "… is dead (connection lost)".
  static std::string describe(const wire::ProcessStatus& row);
  // The words a state prints as: "running", "blocked", "not registered", …
  static std::string_view state_name(wire::ProcessState state);

  // " Now: <describe> for each of the first 8 of `processes`; …; and N more." for an error
  // message; "" when none of them is in `table`.
  static std::string describe_now(const wire::StatusTable& table,
                                  const std::vector<int>& processes);

 private:
  struct ServiceWait {
    uint64_t token = 0;
    bool barrier = false;  // else a blocking key-value get
    std::string name;      // the barrier's id or the key
    uint64_t generation = 0;
    Clock::time_point since;
  };
  struct Reported {
    bool known = false;
    bool blocked = false;
    std::string call;
    Clock::time_point since;
    std::vector<int> waiting_for;
  };
  struct Row {
    std::vector<ServiceWait> waits;  // oldest first
    Reported reported;
    std::string death;
  };

  void fill(wire::ProcessStatus& out, int process, const Context& context,
            Clock::time_point now) const;

  std::vector<Row> rows_;
  uint64_t next_token_ = 1;
};

}  // namespace spmd
