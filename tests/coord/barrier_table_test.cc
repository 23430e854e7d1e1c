#include "coord/barrier_table.h"

#include <gtest/gtest.h>

#include <map>

namespace spmd {
namespace {

// Records what each process's arrival was answered with.
struct Outcomes {
  std::map<int, Status> by_process;
  BarrierTable::Done for_process(int p) {
    return [this, p](const Status& s) { by_process[p] = s; };
  }
};

TEST(BarrierTable, CompletesWhenEveryProcessArrives) {
  BarrierTable table(3);
  Outcomes out;
  EXPECT_TRUE(table.arrive("b", 0, {}, out.for_process(0)).has_value());
  EXPECT_TRUE(table.arrive("b", 2, {}, out.for_process(2)).has_value());
  EXPECT_TRUE(out.by_process.empty());
  EXPECT_FALSE(table.arrive("b", 1, {}, out.for_process(1)).has_value());
  ASSERT_EQ(out.by_process.size(), 3u);
  for (auto& [p, s] : out.by_process) EXPECT_TRUE(s.ok()) << p;
  EXPECT_EQ(table.pending_count(), 0u);
}

TEST(BarrierTable, IdsCanBeReusedInALoop) {
  BarrierTable table(2);
  for (int round = 0; round < 3; ++round) {
    Outcomes out;
    table.arrive("loop", 0, {}, out.for_process(0));
    table.arrive("loop", 1, {}, out.for_process(1));
    ASSERT_EQ(out.by_process.size(), 2u) << round;
  }
}

TEST(Barrier_TimesOutNamingMissingProcesses, EveryWaiterGetsTheSameError) {
  BarrierTable table(4);
  Outcomes out;
  auto key = table.arrive("sync", 0, {}, out.for_process(0));
  table.arrive("sync", 2, {}, out.for_process(2));
  ASSERT_TRUE(key);
  table.expire(*key, "5 s");
  ASSERT_EQ(out.by_process.size(), 2u);
  for (auto& [p, s] : out.by_process) {
    EXPECT_EQ(s.code, StatusCode::kDeadlineExceeded);
    EXPECT_NE(s.message.find("2 of 4 processes arrived"), std::string::npos) << s.message;
    EXPECT_NE(s.message.find("missing processes: 1, 3"), std::string::npos) << s.message;
    EXPECT_NE(s.message.find("'sync'"), std::string::npos);
  }
  // A late arrival at the failed instance hears the same error at once.
  table.arrive("sync", 1, {}, out.for_process(1));
  EXPECT_EQ(out.by_process[1].code, StatusCode::kDeadlineExceeded);
}

TEST(BarrierTable, WaitingTwiceOnOneIdFromOneProcessIsAnError) {
  BarrierTable table(2);
  Outcomes first;
  Outcomes second;
  table.arrive("b", 0, {}, first.for_process(0));
  table.arrive("b", 0, {}, second.for_process(0));
  ASSERT_EQ(second.by_process.size(), 1u);
  EXPECT_EQ(second.by_process[0].code, StatusCode::kFailedPrecondition);
  EXPECT_NE(second.by_process[0].message.find("already in progress"), std::string::npos);
  EXPECT_TRUE(first.by_process.empty());  // the first wait is untouched
}

TEST(BarrierTable, SubsetBarriersNeedOnlyTheirProcesses) {
  BarrierTable table(4);
  Outcomes out;
  table.arrive("pair", 3, {1, 3}, out.for_process(3));
  table.arrive("pair", 1, {3, 1}, out.for_process(1));
  ASSERT_EQ(out.by_process.size(), 2u);
  EXPECT_TRUE(out.by_process[1].ok());
}

TEST(BarrierTable, DisagreeingParticipantListsAreRejected) {
  BarrierTable table(4);
  Outcomes out;
  table.arrive("b", 0, {0, 1}, out.for_process(0));
  table.arrive("b", 1, {0, 1, 2}, out.for_process(1));
  ASSERT_EQ(out.by_process.count(1), 1u);
  EXPECT_EQ(out.by_process[1].code, StatusCode::kInvalidArgument);
  EXPECT_NE(out.by_process[1].message.find("earlier arrivals listed"), std::string::npos);
}

TEST(BarrierTable, NonParticipantsAndBadIdsAreRejected) {
  BarrierTable table(3);
  Outcomes out;
  table.arrive("b", 2, {0, 1}, out.for_process(2));
  EXPECT_EQ(out.by_process[2].code, StatusCode::kInvalidArgument);
  table.arrive("c", 0, {0, 7}, out.for_process(0));
  EXPECT_EQ(out.by_process[0].code, StatusCode::kInvalidArgument);
  table.arrive("d", 1, {1, 1}, out.for_process(1));
  EXPECT_EQ(out.by_process[1].code, StatusCode::kInvalidArgument);
}

TEST(BarrierTable, AListOfEveryProcessEqualsAnEmptyOne) {
  BarrierTable table(2);
  Outcomes out;
  table.arrive("b", 0, {0, 1}, out.for_process(0));
  table.arrive("b", 1, {}, out.for_process(1));
  ASSERT_EQ(out.by_process.size(), 2u);
  EXPECT_TRUE(out.by_process[0].ok());
}

TEST(BarrierTable, ADeadParticipantFailsPendingInstances) {
  BarrierTable table(3);
  Outcomes out;
  table.arrive("b", 0, {}, out.for_process(0));
  table.arrive("pair", 0, {0, 1}, out.for_process(0));
  table.fail_process(2, StatusCode::kPeerFailure, "process 2 died");
  ASSERT_EQ(out.by_process.size(), 1u);  // only "b" includes process 2
  EXPECT_EQ(out.by_process[0].code, StatusCode::kPeerFailure);
  EXPECT_EQ(table.pending_count(), 1u);
}

TEST(FormatProcessList, CutsLongListsAndSaysHowManyMore) {
  std::vector<int> ids;
  ids.reserve(100);
  for (int i = 0; i < 100; ++i) ids.push_back(i);
  const std::string s = format_process_list(ids, 3);
  EXPECT_EQ(s, "0, 1, 2 … and 97 more");
}

}  // namespace
}  // namespace spmd
