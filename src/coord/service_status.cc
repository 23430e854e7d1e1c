// The live view of the cluster (status_board.h), as the service serves it (service_status.h).
#include "coord/service_status.h"

#include <fmt/format.h>

#include "coord/auth_token.h"
#include "coord/wire.h"

namespace spmd {

using SessionPtr = ServiceContext::SessionPtr;
using Clock = ServiceContext::Clock;

LiveView::LiveView(ServiceContext& cx, const BarrierTable& barriers)
    : cx_(cx), barriers_(barriers), board_(cx.opts.num_processes) {}

StatusBoard::Context LiveView::context() const {
  return {cx_.members, barriers_, [this](int p) -> std::optional<Clock::time_point> {
            if (cx_.links[p].last_heard == Clock::time_point{}) return std::nullopt;
            return cx_.links[p].last_heard;
          }};
}

wire::StatusTable LiveView::status_table() const { return board_.table(context(), Clock::now()); }

void LiveView::status_table_in_turns(std::function<void(wire::StatusTable)> done) const {
  struct Making {
    wire::StatusTable table;
    std::vector<int> waited;
    std::function<void(wire::StatusTable)> done;
  };
  auto making = std::make_shared<Making>();
  making->table.set_num_processes(cx_.opts.num_processes);
  making->waited.assign(static_cast<size_t>(cx_.opts.num_processes), 0);
  making->done = std::move(done);
  auto turn = std::make_shared<std::function<void()>>();
  *turn = [this, making, weak = std::weak_ptr(turn)] {
    const int first = making->table.processes_size();
    const int last = std::min(first + kRowsPerTurn, cx_.opts.num_processes);
    board_.add_rows(making->table, first, last, context(), Clock::now(), making->waited);
    if (last < cx_.opts.num_processes) {
      if (auto next = weak.lock()) asio::post(cx_.io, [next] { (*next)(); });
      return;
    }
    StatusBoard::finish_table(making->table, making->waited);
    making->done(std::move(making->table));
  };
  asio::post(cx_.io, [turn] { (*turn)(); });
}

void LiveView::on_status_query(const SessionPtr& session, uint64_t request_id,
                               const wire::StatusRequest& req) {
  const bool process = session->process_id >= 0;
  if (!process && !tokens_equal(req.auth_token(), cx_.opts.auth_token)) {
    cx_.refusals.refused(session->conn->peer(), "a status query with a wrong auth token");
    cx_.reply(*session, request_id,
              {StatusCode::kPermissionDenied,
               "the status query's auth token is not this job's (SPMD_AUTH_TOKEN)"});
    ++cx_.dropped;
    session->dropped = true;  // logged and counted here
    session->conn->close_after_writes("status query refused");
    return;
  }
  if (!process && !cx_.admission.became_tool(*session)) {
    cx_.reply(*session, request_id,
              {StatusCode::kFailedPrecondition,
               fmt::format("the coordination service is answering {} status queries already, the "
                           "most at once; ask again in a moment",
                           Admission::kMaxTools)});
    session->dropped = true;  // an ordinary end, not a drop to log
    session->conn->close_after_writes("too many status queries at once");
    return;
  }
  wire::ServerMessage out;
  *out.mutable_status_table() = status_table();
  cx_.reply_ok(*session, request_id, std::move(out));
  if (!process) {
    session->dropped = true;  // an ordinary end, not a drop to log
    session->conn->close_after_writes("status query answered");
  }
}

void LiveView::on_activity(int process, const wire::Activity& activity) {
  board_.report(process, activity, Clock::now());
}

std::string LiveView::what_they_do(const std::vector<int>& ids) const {
  return ids.empty() ? "" : StatusBoard::describe_now(status_table(), ids);
}

}  // namespace spmd
