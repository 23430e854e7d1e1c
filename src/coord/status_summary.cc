#include "coord/status_summary.h"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <map>
#include <set>

#include "coord/status_board.h"
#include "coord/status_query.h"

namespace spmd {
namespace {

// Dead first, then blocked: what a reader looks for in a hang.
int state_rank(wire::ProcessState state) {
  switch (state) {
    case wire::PROCESS_DEAD:
      return 0;
    case wire::PROCESS_BLOCKED:
      return 1;
    default:
      return 2;
  }
}

bool is_culprit(const wire::ProcessStatus& row) {
  return row.waited_for_by() > 0 && row.state() != wire::PROCESS_BLOCKED;
}

}  // namespace

std::vector<StatusGroup> group_status(const wire::StatusTable& table) {
  std::map<std::pair<int, std::string>, StatusGroup> by_key;
  std::map<std::pair<int, std::string>, std::set<std::string>> hosts;
  for (const auto& row : table.processes()) {
    const std::pair<int, std::string> key{static_cast<int>(row.state()), row.call()};
    StatusGroup& g = by_key[key];
    g.state = row.state();
    g.call = row.call();
    g.processes.push_back(row.process_id());
    g.longest_ms = std::max(g.longest_ms, row.since_ms());
    hosts[key].insert(row.hostname());
  }
  std::vector<StatusGroup> groups;
  groups.reserve(by_key.size());
  for (auto& [key, g] : by_key) {
    g.hosts = static_cast<int>(hosts[key].size());
    std::sort(g.processes.begin(), g.processes.end());
    groups.push_back(std::move(g));
  }
  std::stable_sort(groups.begin(), groups.end(), [](const StatusGroup& a, const StatusGroup& b) {
    if (state_rank(a.state) != state_rank(b.state)) {
      return state_rank(a.state) < state_rank(b.state);
    }
    return a.processes.size() > b.processes.size();
  });
  return groups;
}

std::string process_ranges(const std::vector<int>& sorted, size_t max_chars) {
  std::string out;
  for (size_t i = 0; i < sorted.size();) {
    size_t j = i;
    while (j + 1 < sorted.size() && sorted[j + 1] == sorted[j] + 1) ++j;
    std::string range =
        i == j ? std::to_string(sorted[i]) : fmt::format("{}-{}", sorted[i], sorted[j]);
    if (!out.empty() && out.size() + 1 + range.size() > max_chars) {
      return fmt::format("{},… ({} more)", out, sorted.size() - i);
    }
    if (!out.empty()) out += ',';
    out += range;
    i = j + 1;
  }
  return out;
}

std::string status_summary_json(const wire::StatusTable& table) {
  std::string out;
  auto to = std::back_inserter(out);
  fmt::format_to(to, R"({{"num_processes":{},"culprits":[)", table.num_processes());
  std::vector<const wire::ProcessStatus*> culprits;
  for (const auto& row : table.processes()) {
    if (is_culprit(row)) culprits.push_back(&row);
  }
  std::stable_sort(culprits.begin(), culprits.end(), [](const auto* a, const auto* b) {
    return a->waited_for_by() > b->waited_for_by();
  });
  const size_t shown = std::min(culprits.size(), static_cast<size_t>(kMaxCulprits));
  for (size_t i = 0; i < shown; ++i) {
    if (i > 0) out += ',';
    append_status_row_json(out, *culprits[i]);
  }
  fmt::format_to(to, R"(],"culprits_more":{},"groups":[)", culprits.size() - shown);
  const std::vector<StatusGroup> groups = group_status(table);
  size_t rest = 0;
  for (size_t i = 0; i < groups.size(); ++i) {
    const StatusGroup& g = groups[i];
    if (i >= kMaxGroups) {
      rest += g.processes.size();
      continue;
    }
    if (i > 0) out += ',';
    out += R"({"state":)";
    append_json_string(out, std::string(StatusBoard::state_name(g.state)));
    out += R"(,"call":)";
    append_json_string(out, g.call);
    fmt::format_to(to, R"(,"count":{},"processes":)", g.processes.size());
    append_json_string(out, process_ranges(g.processes, kMaxRangeChars));
    fmt::format_to(to, R"(,"longest_ms":{},"hosts":{}}})", g.longest_ms, g.hosts);
  }
  fmt::format_to(to, R"(],"groups_more":{},"processes_more":{})",
                 groups.size() - std::min(groups.size(), kMaxGroups), rest);
  if (table.num_processes() <= kAllRowsUpTo) {
    out += R"(,"rows":[)";
    for (int i = 0; i < table.processes_size(); ++i) {
      if (i > 0) out += ',';
      append_status_row_json(out, table.processes(i));
    }
    out += ']';
  }
  out += '}';
  return out;
}

}  // namespace spmd
