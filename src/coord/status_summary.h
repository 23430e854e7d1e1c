// The live view in brief, for a page that stays small and quick at any job size: the processes
// that hold the others up, each in full, and every process counted in a group of those alike
// (the same state and call), its members written as ranges ("0-5,7,9-12"). At 16384 processes
// the full table is 4.7 MB of JSON and a 16384-row page; this is kilobytes, and as long as the
// job has few distinct (state, call) pairs, which a hang has. Pure; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "coord/wire.h"

namespace spmd {

// Processes alike: one state and one call.
struct StatusGroup {
  wire::ProcessState state = wire::PROCESS_RUNNING;
  std::string call;
  std::vector<int> processes;  // ascending
  int64_t longest_ms = -1;     // the longest any of them has been in this state (-1: unknown)
  int hosts = 0;               // how many hosts they are on
};

// The table's rows grouped by (state, call): dead first, then blocked, then the rest, each
// kind's largest groups first.
std::vector<StatusGroup> group_status(const wire::StatusTable& table);

// `sorted` (ascending, distinct) as ranges, "0-5,7,9-12"; past `max_chars`, cut at a range's end
// and ended with ",… (N more)".
std::string process_ranges(const std::vector<int>& sorted, size_t max_chars);

// The summary as JSON, for the web page (status_http.h's /summary.json):
//   {"num_processes",
//    "culprits": [row…]   the processes others wait for while not waiting themselves, most
//                         waited for first, at most kMaxCulprits (as status_json's rows),
//    "culprits_more": N,  how many more there are,
//    "groups": [{"state", "call", "count", "processes" (ranges), "longest_ms", "hosts"}…],
//                         at most kMaxGroups, "groups_more": N and "processes_more": N beyond,
//    "rows": [row…]       every row, only in a job of at most kAllRowsUpTo processes}
std::string status_summary_json(const wire::StatusTable& table);

inline constexpr int kMaxCulprits = 20;
inline constexpr size_t kMaxGroups = 100;
inline constexpr int kAllRowsUpTo = 64;
// A group's ranges are cut past this many characters.
inline constexpr size_t kMaxRangeChars = 160;

}  // namespace spmd
