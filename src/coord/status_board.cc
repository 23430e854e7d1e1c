#include "coord/status_board.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace spmd {
namespace {

// At most this many ids per row go into a table; the counts behind waited_for_by use them all.
constexpr size_t kListedWaitingFor = 32;
// Heartbeats come at most 10 s apart: a process unheard for longer is not answering.
constexpr int64_t kStaleHeartbeatMs = 10000;

int64_t ms_between(StatusBoard::Clock::time_point from, StatusBoard::Clock::time_point to) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(to - from).count();
}

std::string age(int64_t ms) {
  if (ms < 1000) return fmt::format("{} ms", ms);
  if (ms < 100000) return fmt::format("{:.1f} s", static_cast<double>(ms) / 1000);
  return fmt::format("{} s", ms / 1000);
}

// A timeout's error describes at most this many of the processes it names.
constexpr size_t kDescribedNow = 8;

}  // namespace

StatusBoard::StatusBoard(int num_processes) : rows_(static_cast<size_t>(num_processes)) {}

void StatusBoard::report(int process, const wire::Activity& activity, Clock::time_point now) {
  Reported& r = rows_[process].reported;
  r.known = true;
  r.blocked = activity.blocked();
  r.call = activity.call();
  r.since = now - std::chrono::milliseconds(std::max<int64_t>(0, activity.for_ms()));
  if (activity.for_ms() < 0) r.since = Clock::time_point{};
  r.waiting_for.clear();
  const int n = static_cast<int>(rows_.size());
  for (int p : activity.waiting_for()) {
    if (p >= 0 && p < n && r.waiting_for.size() < static_cast<size_t>(n)) {
      r.waiting_for.push_back(p);
    }
  }
}

uint64_t StatusBoard::enter_barrier(int process, const std::string& id, uint64_t generation,
                                    Clock::time_point now) {
  const uint64_t token = next_token_++;
  rows_[process].waits.push_back({token, true, id, generation, now});
  return token;
}

uint64_t StatusBoard::enter_key_value_get(int process, const std::string& key,
                                          Clock::time_point now) {
  const uint64_t token = next_token_++;
  rows_[process].waits.push_back({token, false, key, 0, now});
  return token;
}

void StatusBoard::leave_wait(int process, uint64_t token) {
  auto& waits = rows_[process].waits;
  std::erase_if(waits, [token](const ServiceWait& w) { return w.token == token; });
}

void StatusBoard::dead(int process, std::string reason) {
  rows_[process].death = std::move(reason);
  rows_[process].waits.clear();
}

void StatusBoard::fill(wire::ProcessStatus& out, int p, const Context& context,
                       Clock::time_point now) const {
  const Row& row = rows_[p];
  out.set_process_id(p);
  out.set_since_ms(-1);
  const auto heard = context.last_heard(p);
  out.set_heartbeat_age_ms(heard ? ms_between(*heard, now) : -1);
  switch (context.members.state(p)) {
    case MemberState::kEmpty:
      out.set_state(wire::PROCESS_NOT_REGISTERED);
      return;
    case MemberState::kPending:
      out.set_state(wire::PROCESS_REGISTERING);
      break;
    case MemberState::kDead:
      out.set_state(wire::PROCESS_DEAD);
      out.set_detail(row.death);
      break;
    case MemberState::kLeaving:
      out.set_state(wire::PROCESS_LEAVING);
      break;
    case MemberState::kLeft:
      out.set_state(wire::PROCESS_LEFT);
      break;
    case MemberState::kLive:
      break;
  }
  out.set_hostname(context.members.info(p).hostname);
  out.set_pid(context.members.info(p).pid);
  if (context.members.state(p) != MemberState::kLive) return;
  if (!row.waits.empty()) {
    const ServiceWait& w = row.waits.front();
    out.set_state(wire::PROCESS_BLOCKED);
    out.set_since_ms(ms_between(w.since, now));
    if (!w.barrier) {
      out.set_call(fmt::format("key_value_get '{}'", w.name));
      return;
    }
    out.set_call(fmt::format("barrier '{}' #{}", w.name, w.generation));
    for (int q : context.barriers.missing({w.name, w.generation})) out.add_waiting_for(q);
    return;
  }
  const Reported& r = row.reported;
  out.set_state(r.known && r.blocked ? wire::PROCESS_BLOCKED : wire::PROCESS_RUNNING);
  out.set_call(r.call);
  if (r.known && r.since != Clock::time_point{}) out.set_since_ms(ms_between(r.since, now));
  if (r.blocked) {
    for (int q : r.waiting_for) out.add_waiting_for(q);
  }
}

wire::StatusTable StatusBoard::table(const Context& context, Clock::time_point now) const {
  const int n = static_cast<int>(rows_.size());
  wire::StatusTable table;
  table.set_num_processes(n);
  std::vector<int> waited(rows_.size(), 0);
  add_rows(table, 0, n, context, now, waited);
  finish_table(table, waited);
  return table;
}

void StatusBoard::add_rows(wire::StatusTable& table, int first, int last, const Context& context,
                           Clock::time_point now, std::vector<int>& waited) const {
  for (int p = first; p < last; ++p) {
    wire::ProcessStatus& row = *table.add_processes();
    fill(row, p, context, now);
    for (int q : row.waiting_for()) ++waited[q];
    if (static_cast<size_t>(row.waiting_for_size()) > kListedWaitingFor) {
      row.mutable_waiting_for()->Truncate(kListedWaitingFor);
    }
  }
}

void StatusBoard::finish_table(wire::StatusTable& table, const std::vector<int>& waited) {
  for (int p = 0; p < table.processes_size(); ++p) {
    table.mutable_processes(p)->set_waited_for_by(waited[p]);
  }
}

std::string_view StatusBoard::state_name(wire::ProcessState state) {
  switch (state) {
    case wire::PROCESS_NOT_REGISTERED:
      return "not registered";
    case wire::PROCESS_REGISTERING:
      return "registering";
    case wire::PROCESS_RUNNING:
      return "running";
    case wire::PROCESS_BLOCKED:
      return "blocked";
    case wire::PROCESS_LEAVING:
      return "leaving";
    case wire::PROCESS_LEFT:
      return "left";
    case wire::PROCESS_DEAD:
      return "dead";
    default:
      return "unknown";
  }
}

std::string StatusBoard::describe(const wire::ProcessStatus& row) {
  std::string who = fmt::format("process {}", row.process_id());
  if (!row.hostname().empty()) {
    who += fmt::format(" (host {}, pid {})", row.hostname(), row.pid());
  }
  const wire::ProcessState state = row.state();
  std::string what;
  if (state == wire::PROCESS_DEAD) {
    what = row.detail().empty() ? "is dead" : fmt::format("is dead ({})", row.detail());
  } else if (state == wire::PROCESS_BLOCKED) {
    what = fmt::format("is in {}", row.call());
    if (row.since_ms() >= 0) what += " since " + age(row.since_ms());
    if (row.waiting_for_size() > 0) {
      std::vector<int> ids(row.waiting_for().begin(), row.waiting_for().end());
      what += ", waiting for process" + std::string(ids.size() > 1 ? "es " : " ") +
              format_process_list(ids);
    }
  } else if (state == wire::PROCESS_RUNNING) {
    if (row.call().empty()) {
      what = "is running its own code (it has finished no collective call yet)";
    } else {
      what = fmt::format("has been running its own code since it finished {}", row.call());
      if (row.since_ms() >= 0) what += ", " + age(row.since_ms()) + " ago";
    }
  } else if (state == wire::PROCESS_LEAVING) {
    what = "has called shutdown() and waits there for the others";
  } else if (state == wire::PROCESS_LEFT) {
    what = "has called shutdown() and left";
  } else {
    what = "has not registered";
  }
  if (state != wire::PROCESS_DEAD && row.heartbeat_age_ms() > kStaleHeartbeatMs) {
    what += fmt::format(" (last heard from {} ago: it may be stopped or cut off)",
                        age(row.heartbeat_age_ms()));
  }
  return who + " " + what;
}

std::string StatusBoard::describe_now(const wire::StatusTable& table,
                                      const std::vector<int>& processes) {
  std::string out = " Now:";
  size_t described = 0;
  for (int p : processes) {
    if (p < 0 || p >= table.processes_size() || described == kDescribedNow) continue;
    out += (described++ == 0 ? " " : "; ") + describe(table.processes(p));
  }
  if (described == 0) return "";
  if (processes.size() > described) {
    out += fmt::format("; and {} more", processes.size() - described);
  }
  return out + ".";
}

}  // namespace spmd
