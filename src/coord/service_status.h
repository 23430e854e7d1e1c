// The coordination service's live view (status_board.h) as it serves it: status queries from
// spmd-status and processes, what processes report about their calls, and what a barrier's
// timeout says of those missing. Owns the board. Event loop only.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "coord/barrier_table.h"
#include "coord/service_context.h"
#include "coord/status_board.h"

namespace spmd {

class LiveView {
 public:
  // `barriers` is read when a table is made (Requests owns it).
  LiveView(ServiceContext& cx, const BarrierTable& barriers);

  StatusBoard& board() { return board_; }
  // O(N).
  wire::StatusTable status_table() const;
  // status_table() made kRowsPerTurn rows per turn of the event loop, so that the service
  // answers heartbeats in between (the status page's copy: 16384 rows take tens of ms); `done`
  // runs on the loop with the table. Rows are read at slightly different moments, a few ms
  // apart at most. Thread-safe: only posts to the loop, where the rows are read.
  static constexpr int kRowsPerTurn = 256;
  void status_table_in_turns(std::function<void(wire::StatusTable)> done) const;
  // A query from spmd-status (a connection that is not a process, with the job's token) or from
  // a process (already authenticated). A stranger's connection closes after the answer.
  void on_status_query(const ServiceContext::SessionPtr& session, uint64_t request_id,
                       const wire::StatusRequest& req);
  void on_activity(int process, const wire::Activity& activity);
  // " Now: process 3 (host b, pid 77) is …; process 5 …" for the first few of `ids`.
  std::string what_they_do(const std::vector<int>& ids) const;

 private:
  StatusBoard::Context context() const;

  ServiceContext& cx_;
  const BarrierTable& barriers_;
  StatusBoard board_;
};

}  // namespace spmd
