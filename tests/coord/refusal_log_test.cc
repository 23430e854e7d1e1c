// The refusal log (refusal_log.h): a flood of refusals from one host is one line in full and one
// summary per interval, hosts apart, a bounded number of hosts tracked.
#include "coord/refusal_log.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace spmd {
namespace {

using namespace std::chrono_literals;

struct Lines {
  std::vector<std::string> lines;
  RefusalLog::Sink sink() {
    return [this](const std::string& line) { lines.push_back(line); };
  }
};

TEST(RefusalLog, AFloodFromOneHostIsOneLineAndOneSummaryPerInterval) {
  Lines out;
  RefusalLog log(10s, out.sink());
  const auto t0 = RefusalLog::Clock::time_point{} + 1h;
  for (int i = 0; i < 27804; ++i) {
    log.refused("10.0.0.7:" + std::to_string(40000 + i % 1000), "wrong auth token",
                t0 + std::chrono::microseconds(i * 200));  // 27804 in 5.6 s
  }
  ASSERT_EQ(out.lines.size(), 1u);
  EXPECT_EQ(out.lines[0],
            "coordination service: refused a connection from 10.0.0.7: wrong auth token");
  log.flush(t0 + 9s);  // the interval has not passed
  EXPECT_EQ(out.lines.size(), 1u);
  log.flush(t0 + 10s);
  ASSERT_EQ(out.lines.size(), 2u);
  EXPECT_EQ(out.lines[1],
            "coordination service: refused 27803 more connections from 10.0.0.7 in the last 10 s; "
            "the last: wrong auth token");
  log.refused("10.0.0.7:1", "no registration", t0 + 11s);  // a new interval: in full again
  ASSERT_EQ(out.lines.size(), 3u);
  EXPECT_EQ(log.total(), 27805u);
}

TEST(RefusalLog, HostsAreCountedApartAndASummaryComesAtTheHostsNextRefusal) {
  Lines out;
  RefusalLog log(10s, out.sink());
  const auto t0 = RefusalLog::Clock::time_point{} + 1h;
  log.refused("[::1]:5000", "a", t0);
  log.refused("10.0.0.8:5000", "b", t0);
  log.refused("[::1]:5001", "c", t0 + 1s);
  log.refused("[::1]:5002", "d", t0 + 12s);  // the summary of c, then d in full
  ASSERT_EQ(out.lines.size(), 4u);
  EXPECT_NE(out.lines[0].find("from [::1]: a"), std::string::npos);
  EXPECT_NE(out.lines[1].find("from 10.0.0.8: b"), std::string::npos);
  EXPECT_NE(out.lines[2].find("refused 1 more connection from [::1] in the last 10 s; the last: c"),
            std::string::npos);
  EXPECT_NE(out.lines[3].find("from [::1]: d"), std::string::npos);
}

TEST(RefusalLog, BeyondTheTrackedHostsRefusalsCountAsOtherHosts) {
  Lines out;
  RefusalLog log(10s, out.sink());
  const auto t0 = RefusalLog::Clock::time_point{} + 1h;
  for (size_t i = 0; i < RefusalLog::kMaxSources + 500; ++i) {
    log.refused("10.1." + std::to_string(i / 256) + "." + std::to_string(i % 256) + ":1", "x", t0);
  }
  // One line per tracked host, one for "other hosts"; the other 499 counted there.
  EXPECT_EQ(out.lines.size(), RefusalLog::kMaxSources + 1);
  log.flush(t0 + 10s);
  EXPECT_NE(out.lines.back().find("refused 499 more connections from other hosts"),
            std::string::npos);
}

TEST(RefusalLog, PeerHostDropsThePort) {
  EXPECT_EQ(peer_host("10.0.0.7:51234"), "10.0.0.7");
  EXPECT_EQ(peer_host("[::1]:80"), "[::1]");
  EXPECT_EQ(peer_host("[::1]"), "[::1]");
  EXPECT_EQ(peer_host("unix"), "unix");
}

// What a registration timeout says about strangers: totals since the start, by host, most
// first, the rest summed; bounded like the log itself.
TEST(RefusalLog, TotalsByHostNameTheBusiestFirst) {
  Lines out;
  RefusalLog log(10s, out.sink());
  EXPECT_EQ(log.by_host(4), "");
  const auto t0 = RefusalLog::Clock::time_point{} + 1h;
  for (int i = 0; i < 30; ++i) log.refused("10.0.0.7:" + std::to_string(i), "x", t0 + 20s * i);
  for (int i = 0; i < 5; ++i) log.refused("[::1]:9", "x", t0);
  log.refused("10.0.0.9:1", "x", t0);
  log.refused("10.0.0.8:1", "x", t0);
  EXPECT_EQ(log.by_host(4), "10.0.0.7 (30), [::1] (5), 10.0.0.8 (1), 10.0.0.9 (1)");
  EXPECT_EQ(log.by_host(1), "10.0.0.7 (30) and 7 from 3 more hosts");
  for (int i = 0; i < 3000; ++i) log.refused("10.1." + std::to_string(i) + ".1:1", "x", t0);
  EXPECT_EQ(log.total(), 3037u);
  // 1023 hosts are counted by name (4 before, 1019 of the new ones); the other 1981 new ones are
  // counted together.
  EXPECT_EQ(log.by_host(2), "other hosts (1981), 10.0.0.7 (30) and 1026 from 1022 more hosts");
}

}  // namespace
}  // namespace spmd
