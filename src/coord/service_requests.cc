// Requests of a formed cluster: the key-value store, barriers and the live-process query
// (service_requests.h).
#include "coord/service_requests.h"

#include <fmt/format.h>

namespace spmd {

Requests::Requests(ServiceContext& cx, LiveView& view)
    : cx_(cx), view_(view), barriers_(cx.opts.num_processes) {
  barriers_.on_settled([this](const BarrierTable::InstanceKey& key) {
    barrier_deadlines_.erase({key.id, key.generation});  // destroying the timer cancels it
  });
}

void Requests::on_kv_set(ServiceSession& session, uint64_t request_id,
                         const wire::KvSetRequest& req) {
  if (req.key().empty()) {
    return cx_.reply(session, request_id, {StatusCode::kInvalidArgument, "empty key"});
  }
  if (!kv_.set(req.key(), req.value(), req.allow_overwrite())) {
    return cx_.reply(session, request_id,
                     {StatusCode::kAlreadyExists,
                      fmt::format("key '{}' already has a value; pass allow_overwrite=true to "
                                  "replace it",
                                  req.key())});
  }
  cx_.reply(session, request_id, {});
}

void Requests::on_kv_get(const SessionPtr& session, uint64_t request_id,
                         const wire::KvGetRequest& req) {
  if (const std::string* value = kv_.find(req.key())) {
    wire::ServerMessage out;
    out.set_value(*value);
    return cx_.reply_ok(*session, request_id, std::move(out));
  }
  if (!req.blocking()) return cx_.reply(*session, request_id, {});
  const milliseconds timeout = clamp_client_timeout(req.timeout_ms());
  auto timer = std::make_shared<asio::steady_timer>(cx_.io, timeout);
  const int p = session->process_id;
  const uint64_t shown = view_.board().enter_key_value_get(p, req.key(), Clock::now());
  const uint64_t token =
      kv_.wait(req.key(), [this, session, request_id, timer, p, shown](const std::string& value) {
        timer->cancel();
        view_.board().leave_wait(p, shown);
        wire::ServerMessage out;
        out.set_value(value);
        cx_.reply_ok(*session, request_id, std::move(out));
      });
  timer->async_wait([this, session, request_id, token, key = req.key(), timeout, p,
                     shown](asio::error_code ec) {
    if (ec || !kv_.cancel_wait(token)) return;
    view_.board().leave_wait(p, shown);
    cx_.reply(
        *session, request_id,
        {StatusCode::kDeadlineExceeded,
         fmt::format("key '{}' was not set by any process within {} ms", key, timeout.count())});
  });
}

void Requests::on_kv_dir_get(ServiceSession& session, uint64_t request_id,
                             const wire::KvDirGetRequest& req) {
  wire::ServerMessage out;
  for (auto& [k, v] : kv_.dir_get(req.prefix())) {
    auto* e = out.mutable_entries()->add_entries();
    e->set_key(k);
    e->set_value(v);
  }
  cx_.reply_ok(session, request_id, std::move(out));
}

void Requests::on_kv_delete(ServiceSession& session, uint64_t request_id,
                            const wire::KvDeleteRequest& req) {
  kv_.erase(req.key());
  cx_.reply(session, request_id, {});
}

void Requests::on_kv_increment(ServiceSession& session, uint64_t request_id,
                               const wire::KvIncrementRequest& req) {
  auto result = kv_.increment(req.key(), req.delta());
  if (auto* err = std::get_if<std::string>(&result)) {
    return cx_.reply(session, request_id, {StatusCode::kInvalidArgument, *err});
  }
  wire::ServerMessage out;
  out.set_counter(std::get<int64_t>(result));
  cx_.reply_ok(session, request_id, std::move(out));
}

// Why a barrier cannot complete before anyone waits: a participant is dead or has called
// shutdown(). O(participants listed); a barrier of all processes costs O(1) here.
std::optional<Status> Requests::barrier_blocked(const wire::BarrierRequest& req) const {
  const int n = cx_.opts.num_processes;
  std::optional<int> dead;
  std::optional<int> left;
  if (req.process_ids().empty()) {
    dead = cx_.members.first_dead();
    left = cx_.members.first_gone();
  }
  for (int q : req.process_ids()) {
    if (q < 0 || q >= n) continue;  // BarrierTable refuses the list with the reason
    if (!dead && cx_.members.state(q) == MemberState::kDead) dead = q;
    if (!left && cx_.members.has_left(q)) left = q;
  }
  if (dead) {
    return Status{StatusCode::kPeerFailure, fmt::format("barrier '{}' cannot complete: {} is dead",
                                                        req.id(), cx_.members.describe(*dead))};
  }
  if (left) {
    return Status{StatusCode::kPeerFailure,
                  fmt::format("barrier '{}' cannot complete: {} called shutdown() and will not "
                              "arrive",
                              req.id(), cx_.members.describe(*left))};
  }
  return std::nullopt;
}

void Requests::on_barrier(const SessionPtr& session, uint64_t request_id,
                          const wire::BarrierRequest& req) {
  ++cx_.barrier_arrivals;
  if (const auto blocked = barrier_blocked(req)) return cx_.reply(*session, request_id, *blocked);
  const std::vector<int> participants(req.process_ids().begin(), req.process_ids().end());
  const int p = session->process_id;
  // The live view shows the wait until it is answered; this arrival joins instance
  // arrivals(id, p) (barrier_table.h).
  const uint64_t shown =
      view_.board().enter_barrier(p, req.id(), barriers_.arrivals(req.id(), p), Clock::now());
  auto key = barriers_.arrive(req.id(), p, participants,
                              [this, session, request_id, p, shown](const Status& status) {
                                view_.board().leave_wait(p, shown);
                                cx_.reply(*session, request_id, status);
                              });
  if (key) arm_barrier_deadline(*key, clamp_client_timeout(req.timeout_ms()));
}

// One timer per pending instance, at the earliest of its waiters' deadlines (the first waiter
// to give up fails the instance for all), dropped as soon as the instance settles. A timer per
// arrival would keep N timers per barrier alive until their deadlines, long after it completed:
// at 16384 processes and a 2-minute timeout that held 100 MB.
void Requests::arm_barrier_deadline(const BarrierTable::InstanceKey& key, milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  auto [it, created] = barrier_deadlines_.try_emplace({key.id, key.generation});
  BarrierDeadline& d = it->second;
  if (!created && d.deadline <= deadline) return;
  if (!d.timer) d.timer = std::make_unique<asio::steady_timer>(cx_.io);
  d.deadline = deadline;
  d.timeout = timeout;
  d.timer->expires_at(deadline);
  d.timer->async_wait([this, key, timeout](asio::error_code ec) {
    if (ec) return;
    barriers_.expire(
        key, fmt::format("{} ms", timeout.count()),
        [this](const std::vector<int>& missing) { return view_.what_they_do(missing); });
  });
}

void Requests::on_live_processes(ServiceSession& session, uint64_t request_id) {
  wire::ServerMessage out;
  for (int i = 0; i < cx_.opts.num_processes; ++i) {
    if (cx_.members.active(i)) out.mutable_live()->add_process_ids(i);
  }
  cx_.reply_ok(session, request_id, std::move(out));
}

}  // namespace spmd
