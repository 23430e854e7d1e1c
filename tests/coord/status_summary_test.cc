// The live view in brief (status_summary.h): groups of processes alike, their ranges, the
// processes that hold the others up first, and a summary that stays small at 16384 processes.
#include "coord/status_summary.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace spmd {
namespace {

using json = nlohmann::json;

wire::ProcessStatus row(int process, wire::ProcessState state, const std::string& call,
                        int64_t since_ms, const std::string& host = "a") {
  wire::ProcessStatus r;
  r.set_process_id(process);
  r.set_state(state);
  r.set_call(call);
  r.set_since_ms(since_ms);
  r.set_hostname(host);
  r.set_pid(1000 + process);
  return r;
}

// `n` processes: `culprit` running its own code since all_reduce #41, waited for by every
// other; two dead; 100 still in all_reduce #41's predecessor; the rest in barrier "epoch-end".
wire::StatusTable hang(int n, int culprit) {
  wire::StatusTable t;
  t.set_num_processes(n);
  for (int p = 0; p < n; ++p) {
    wire::ProcessStatus r;
    if (p == culprit) {
      r = row(p, wire::PROCESS_RUNNING, "all_reduce #41", 90'000, "b");
      r.set_waited_for_by(n - 1);
    } else if (p == n - 1 || p == n - 2) {
      r = row(p, wire::PROCESS_DEAD, "", -1);
      r.set_detail("connection lost");
    } else if (p % 97 == 5 && p < 97 * 100) {
      r = row(p, wire::PROCESS_RUNNING, "all_reduce #40", 1000 + p);
    } else {
      r = row(p, wire::PROCESS_BLOCKED, "barrier 'epoch-end'", 60'000 + p, p % 2 ? "a" : "c");
      r.add_waiting_for(culprit);
    }
    *t.add_processes() = r;
  }
  return t;
}

TEST(StatusSummary, RangesAreCompactAndCutAtARangesEnd) {
  EXPECT_EQ(process_ranges({}, 100), "");
  EXPECT_EQ(process_ranges({3}, 100), "3");
  EXPECT_EQ(process_ranges({0, 1, 2, 5, 7, 8}, 100), "0-2,5,7-8");
  std::vector<int> odd;
  for (int p = 1; p < 100; p += 2) odd.push_back(p);
  const std::string cut = process_ranges(odd, 20);
  EXPECT_EQ(cut, "1,3,5,7,9,11,13,15,… (42 more)");
}

TEST(StatusSummary, GroupsPutTheDeadThenTheBlockedFirstLargestFirst) {
  const auto groups = group_status(hang(1000, 7));
  ASSERT_EQ(groups.size(), 4u);
  EXPECT_EQ(groups[0].state, wire::PROCESS_DEAD);
  EXPECT_EQ(groups[0].processes, (std::vector<int>{998, 999}));
  EXPECT_EQ(groups[1].state, wire::PROCESS_BLOCKED);
  EXPECT_EQ(groups[1].call, "barrier 'epoch-end'");
  EXPECT_EQ(groups[1].hosts, 2);
  EXPECT_EQ(groups[1].longest_ms, 60'000 + 997);
  EXPECT_EQ(groups[2].call, "all_reduce #40");  // 11 processes, before the culprit's 1
  EXPECT_EQ(groups[2].processes.size(), 11u);
  EXPECT_EQ(groups[3].processes, (std::vector<int>{7}));
  size_t total = 0;
  for (const auto& g : groups) total += g.processes.size();
  EXPECT_EQ(total, 1000u);
}

TEST(StatusSummary, AtSixteenThousandProcessesTheCulpritLeadsAndTheSummaryStaysSmall) {
  const std::string text = status_summary_json(hang(16384, 12345));
  EXPECT_LT(text.size(), 16u * 1024) << "the summary is " << text.size() << " bytes";
  const json j = json::parse(text);
  EXPECT_EQ(j["num_processes"], 16384);
  ASSERT_EQ(j["culprits"].size(), 1u);
  EXPECT_EQ(j["culprits"][0]["process"], 12345);
  EXPECT_EQ(j["culprits"][0]["waited_for_by"], 16383);
  EXPECT_FALSE(j.contains("rows"));
  int64_t total = 0;
  for (const auto& g : j["groups"]) total += g["count"].get<int64_t>();
  EXPECT_EQ(total, 16384);
  EXPECT_EQ(j["groups"][1]["state"], "blocked");
  EXPECT_EQ(j["groups"][1]["count"], 16384 - 3 - 100);
}

TEST(StatusSummary, ASmallJobHasEveryRowAndAManyCallJobIsCapped) {
  const json small = json::parse(status_summary_json(hang(3, 2)));
  ASSERT_TRUE(small.contains("rows"));
  EXPECT_EQ(small["rows"].size(), 3u);
  wire::StatusTable many;
  many.set_num_processes(300);
  for (int p = 0; p < 300; ++p) {
    *many.add_processes() = row(p, wire::PROCESS_RUNNING, "call #" + std::to_string(p), 5);
  }
  const std::string text = status_summary_json(many);
  const json j = json::parse(text);
  EXPECT_EQ(j["groups"].size(), kMaxGroups);
  EXPECT_EQ(j["groups_more"], 300 - static_cast<int>(kMaxGroups));
  EXPECT_EQ(j["processes_more"], 300 - static_cast<int>(kMaxGroups));
  EXPECT_LT(text.size(), 64u * 1024);
}

}  // namespace
}  // namespace spmd
