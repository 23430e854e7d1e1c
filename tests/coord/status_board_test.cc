// The live view's table and sentences, without a service: Membership and StatusBoard alone.
#include "coord/status_board.h"

#include <gtest/gtest.h>

#include "coord/membership.h"

namespace spmd {
namespace {

using namespace std::chrono_literals;
using Clock = StatusBoard::Clock;

class StatusBoardTest : public ::testing::Test {
 protected:
  StatusBoardTest() : members_(4), barriers_(4), board_(4) {
    for (int p = 0; p < 4; ++p) {
      members_.register_pending(
          p, MemberInfo{"id" + std::to_string(p), "h" + std::to_string(p), 100 + p, {}});
    }
    members_.form();
  }
  wire::StatusTable table(Clock::time_point now) {
    return board_.table(
        {members_, barriers_, [&](int p) -> std::optional<Clock::time_point> { return heard_[p]; }},
        now);
  }
  Membership members_;
  BarrierTable barriers_;
  StatusBoard board_;
  std::optional<Clock::time_point> heard_[4];
};

TEST_F(StatusBoardTest, EveryStateReadsAsASentence) {
  const auto t0 = Clock::now();
  for (auto& h : heard_) h = t0;
  heard_[3] = t0 - 30s;  // silent for 30 s
  // Twelve rounds of 'epoch-end' complete; in the thirteenth (#12) processes 0-2 wait for 3.
  for (int round = 0; round <= 12; ++round) {
    for (int p = 0; p < (round < 12 ? 4 : 3); ++p)
      barriers_.arrive("epoch-end", p, {}, [](auto&) {});
  }
  board_.enter_barrier(0, "epoch-end", 12, t0 - 41s);
  wire::Activity finished;
  finished.set_call("all_reduce #881");
  finished.set_for_ms(600000);
  board_.report(1, finished, t0);
  members_.mark_dead(2);
  board_.dead(2, "connection lost");
  const auto t = table(t0);
  EXPECT_EQ(StatusBoard::describe(t.processes(0)),
            "process 0 (host h0, pid 100) is in barrier 'epoch-end' #12 since 41.0 s, waiting for "
            "process 3");
  EXPECT_EQ(StatusBoard::describe(t.processes(1)),
            "process 1 (host h1, pid 101) has been running its own code since it finished "
            "all_reduce #881, 600 s ago");
  EXPECT_EQ(StatusBoard::describe(t.processes(2)),
            "process 2 (host h2, pid 102) is dead (connection lost)");
  EXPECT_EQ(StatusBoard::describe(t.processes(3)),
            "process 3 (host h3, pid 103) is running its own code (it has finished no collective "
            "call yet) (last heard from 30.0 s ago: it may be stopped or cut off)");
  EXPECT_EQ(t.processes(3).waited_for_by(), 1);
  EXPECT_EQ(t.processes(1).waited_for_by(), 0);
}

TEST_F(StatusBoardTest, AServiceWaitShowsFirstAndEndsWhenLeft) {
  const auto t0 = Clock::now();
  wire::Activity blocked;
  blocked.set_blocked(true);
  blocked.set_call("all_gather #3 (float32 x 4)");
  blocked.set_for_ms(50);
  blocked.add_waiting_for(2);
  blocked.add_waiting_for(99);  // not a process: dropped
  board_.report(1, blocked, t0);
  EXPECT_EQ(table(t0).processes(1).call(), "all_gather #3 (float32 x 4)");
  EXPECT_EQ(table(t0).processes(1).waiting_for_size(), 1);
  const uint64_t token = board_.enter_key_value_get(1, "k", t0);
  EXPECT_EQ(table(t0).processes(1).call(), "key_value_get 'k'");
  board_.leave_wait(1, token);
  EXPECT_EQ(table(t0).processes(1).call(), "all_gather #3 (float32 x 4)");
  members_.begin_leaving(1);
  EXPECT_EQ(table(t0).processes(1).state(), spmd::wire::PROCESS_LEAVING);
}

// The status page's table is made a few rows per turn of the service's loop: the pieces put
// together are the table made at once.
TEST_F(StatusBoardTest, ATableMadeInPiecesIsTheTableMadeAtOnce) {
  const auto t0 = Clock::now();
  for (auto& h : heard_) h = t0;
  for (int p = 0; p < 3; ++p) barriers_.arrive("b", p, {}, [](auto&) {});
  board_.enter_barrier(1, "b", 0, t0 - 2s);
  board_.enter_barrier(2, "b", 0, t0 - 1s);
  const StatusBoard::Context context{
      members_, barriers_, [&](int p) -> std::optional<Clock::time_point> { return heard_[p]; }};
  wire::StatusTable pieces;
  pieces.set_num_processes(4);
  std::vector<int> waited(4, 0);
  board_.add_rows(pieces, 0, 1, context, t0, waited);
  board_.add_rows(pieces, 1, 3, context, t0, waited);
  board_.add_rows(pieces, 3, 4, context, t0, waited);
  StatusBoard::finish_table(pieces, waited);
  const wire::StatusTable whole = table(t0);
  EXPECT_EQ(pieces.SerializeAsString(), whole.SerializeAsString());
  EXPECT_EQ(whole.processes(3).waited_for_by(), 2);
}

}  // namespace
}  // namespace spmd
