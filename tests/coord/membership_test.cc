// Membership: the states of a cluster's processes, without sockets.
#include "coord/membership.h"

#include <gtest/gtest.h>

namespace spmd {
namespace {

MemberInfo info(const std::string& host, int64_t pid) {
  MemberInfo i;
  i.host_id = host;
  i.hostname = host;
  i.pid = pid;
  return i;
}

Membership formed(int n) {
  Membership m(n);
  for (int p = 0; p < n; ++p) m.register_pending(p, info("h" + std::to_string(p), 100 + p));
  m.form();
  return m;
}

TEST(Membership, TheLastRegistrationCompletesTheCluster) {
  Membership m(3);
  EXPECT_FALSE(m.register_pending(2, info("a", 1)));
  EXPECT_FALSE(m.register_pending(0, info("b", 2)));
  EXPECT_EQ(m.missing(), std::vector<int>{1});
  EXPECT_TRUE(m.register_pending(1, info("c", 3)));
  m.form();
  EXPECT_TRUE(m.formed());
  EXPECT_EQ(m.live_count(), 3);
  EXPECT_EQ(m.describe(2), "process 2 (host a, pid 1)");
}

TEST(Membership, AReleasedRegistrationFreesItsId) {
  Membership m(2);
  m.register_pending(0, info("a", 1));
  m.release_pending(0);
  EXPECT_EQ(m.state(0), MemberState::kEmpty);
  EXPECT_EQ(m.pending_count(), 0);
  EXPECT_EQ(m.missing(), (std::vector<int>{0, 1}));
}

TEST(Membership, ShutdownIsCompleteWhenNobodyIsLiveAndFinishedWhenAllLeftOrDied) {
  Membership m = formed(3);
  EXPECT_TRUE(m.begin_leaving(1));
  EXPECT_FALSE(m.begin_leaving(1));  // once
  EXPECT_EQ(m.first_gone(), 1);
  EXPECT_TRUE(m.has_left(1));
  EXPECT_TRUE(m.active(1));
  EXPECT_EQ(m.live_count(), 2);
  EXPECT_TRUE(m.mark_dead(0));
  EXPECT_TRUE(m.begin_leaving(2));
  EXPECT_EQ(m.live_count(), 0);
  EXPECT_FALSE(m.finished());  // 1 and 2 are leaving, not yet left
  EXPECT_TRUE(m.finish_leaving(1));
  EXPECT_TRUE(m.finish_leaving(2));
  EXPECT_FALSE(m.finish_leaving(0));  // dead, not leaving
  EXPECT_TRUE(m.finished());
}

TEST(Membership, OnlyAnActiveProcessCanDieAndTheFirstDeathIsKept) {
  Membership m = formed(4);
  EXPECT_TRUE(m.mark_dead(3));
  EXPECT_FALSE(m.mark_dead(3));  // each death counts once
  EXPECT_TRUE(m.begin_leaving(2));
  EXPECT_TRUE(m.mark_dead(2));  // a leaving process can still die
  EXPECT_EQ(m.first_dead(), 3);
  EXPECT_FALSE(m.active(2));
  EXPECT_EQ(m.live_count(), 2);
  Membership unformed(2);
  EXPECT_FALSE(unformed.mark_dead(0));  // pending is not active
}

TEST(Membership, CountsStayExactThroughEveryTransition) {
  // The O(1) answers must agree with a walk over the slots after any sequence.
  Membership m = formed(64);
  for (int p = 0; p < 64; p += 3) m.begin_leaving(p);
  for (int p = 0; p < 64; p += 5) m.mark_dead(p);
  for (int p = 0; p < 64; p += 3) m.finish_leaving(p);
  int live = 0;
  bool all_gone = true;
  for (int p = 0; p < 64; ++p) {
    live += m.state(p) == MemberState::kLive ? 1 : 0;
    all_gone = all_gone && (m.state(p) == MemberState::kLeft || m.state(p) == MemberState::kDead);
  }
  EXPECT_EQ(m.live_count(), live);
  EXPECT_EQ(m.finished(), all_gone);
}

}  // namespace
}  // namespace spmd
