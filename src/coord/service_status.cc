// The live view of the cluster (status_board.h), as the service serves it.
#include <spdlog/spdlog.h>

#include "coord/service_impl.h"
#include "coord/wire.h"

namespace spmd {

// O(N).
wire::StatusTable CoordService::Impl::status_table() const {
  const StatusBoard::Context context{members_, barriers_,
                                     [this](int p) -> std::optional<Clock::time_point> {
                                       if (links_[p].last_heard == Clock::time_point{})
                                         return std::nullopt;
                                       return links_[p].last_heard;
                                     }};
  return board_.table(context, Clock::now());
}

// A query from spmd-status (a connection that is not a process, with the job's token) or from a
// process (already authenticated). A stranger's connection closes after the answer.
void CoordService::Impl::on_status_query(const std::shared_ptr<Session>& session,
                                         uint64_t request_id, const wire::StatusRequest& req) {
  const bool process = session->process_id >= 0;
  if (!process && !tokens_equal(req.auth_token(), opts_.auth_token)) {
    spdlog::warn("coordination service: refused a status query from {}: wrong auth token",
                 session->conn->peer());
    reply(*session, request_id,
          {StatusCode::kPermissionDenied,
           "the status query's auth token is not this job's (SPMD_AUTH_TOKEN)"});
    ++dropped_;
    session->dropped = true;  // logged and counted here
    session->conn->close_after_writes("status query refused");
    return;
  }
  wire::ServerMessage out;
  *out.mutable_status_table() = status_table();
  reply_ok(*session, request_id, std::move(out));
  if (!process) {
    session->dropped = true;  // an ordinary end, not a drop to log
    session->conn->close_after_writes("status query answered");
  }
}

void CoordService::Impl::on_activity(int process, const wire::Activity& activity) {
  board_.report(process, activity, Clock::now());
}

std::string CoordService::Impl::what_they_do(const std::vector<int>& ids) const {
  return ids.empty() ? "" : StatusBoard::describe_now(status_table(), ids);
}

}  // namespace spmd
