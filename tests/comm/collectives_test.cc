// Collectives across real processes: every op checked against a reference for mixes of
// processes and devices per process, over shared memory, forced TCP and hosts told apart by
// SPMD_HOST_ID; and the failures the issue names — mismatched calls, a participant killed
// mid-collective, one that never arrives — raise clear errors in every participant, in time.
//
// CTest runs the suite three times: as it is (Collectives.*), and over UCX (UcxTcp.Collectives.*,
// UcxSm.Collectives.*, when spmd is built with UCX), where SPMD_TEST_UCX_TLS makes every process
// use SPMD_TRANSPORT=ucx with UCX_TLS=tcp — each process then a host of its own, so UCX connects
// hosts and watches its peers — or UCX_TLS=sm within one host.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <functional>
#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "common/subprocess.h"
#include "support/test_process.h"

namespace spmd {
namespace {

using namespace std::chrono_literals;
using testing::TestProcess;

const std::string kProbe = SPMD_TEST_COMM_PROBE;

struct Outcome {
  int code;
  std::string output;
};

// UCX_TLS for the UCX runs of the suite, or none.
std::optional<std::string> ucx_tls() {
  const char* tls = std::getenv("SPMD_TEST_UCX_TLS");
  if (tls == nullptr || *tls == '\0') return std::nullopt;
  return std::string(tls);
}

// The environment of process `i` in the UCX runs: before the test's own, which may override it.
TestProcess::Env ucx_env(int i) {
  const auto tls = ucx_tls();
  if (!tls) return {};
  TestProcess::Env e = {{"SPMD_TRANSPORT", "ucx"}, {"UCX_TLS", *tls}};
  if (*tls == "tcp") {
    e.push_back({"SPMD_HOST_ID", "ucx-host-" + std::to_string(i)});
    e.push_back({"UCX_NET_DEVICES", "lo"});  // tests send to loopback only
  }
  return e;
}

// The transport a verified run reports: "ucx" in the UCX runs.
std::string expected_transport(const std::string& transport) {
  return ucx_tls() && transport != "local" ? "ucx" : transport;
}

// Tests about spmd's own TCP, or hosts that UCX_TLS=sm cannot connect, do not run over UCX.
#define SKIP_OVER_UCX(why)                                                  \
  if (ucx_tls()) {                                                          \
    GTEST_SKIP() << "not run with UCX_TLS=" << *ucx_tls() << ": " << (why); \
  }
#define SKIP_OVER_UCX_SM(why)                             \
  if (ucx_tls() == "sm") {                                \
    GTEST_SKIP() << "not run with UCX_TLS=sm: " << (why); \
  }

// Starts `n` comm_probe processes forming one cluster (each with `devices` CPU devices and
// `env`, plus per-process `env_of(i)`), waits for all within `limit` together — well inside
// CTest's 120 s for the test, so a hang is reported by this test, naming the process.
std::vector<Outcome> run_cluster(int n, int devices, const std::vector<std::string>& args,
                                 const TestProcess::Env& env = {},
                                 const std::function<TestProcess::Env(int)>& env_of = nullptr,
                                 std::chrono::seconds limit = 90s) {
  const std::string address = "127.0.0.1:" + std::to_string(tools::free_port());
  std::vector<std::unique_ptr<TestProcess>> procs;
  for (int i = 0; i < n; ++i) {
    TestProcess::Env e = ucx_env(i);
    e.insert(e.end(), env.begin(), env.end());
    e.push_back({"SPMD_COORDINATOR_ADDRESS", address});
    e.push_back({"SPMD_NUM_PROCESSES", std::to_string(n)});
    e.push_back({"SPMD_PROCESS_ID", std::to_string(i)});
    e.push_back({"SPMD_CPU_DEVICES", std::to_string(devices)});
    if (env_of) {
      for (auto& kv : env_of(i)) e.push_back(kv);
    }
    std::vector<std::string> argv = {kProbe};
    argv.insert(argv.end(), args.begin(), args.end());
    procs.push_back(std::make_unique<TestProcess>(argv, e));
  }
  std::vector<Outcome> out;
  const auto deadline = std::chrono::steady_clock::now() + limit;
  for (auto& p : procs) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    auto status = p->wait(std::max(left, std::chrono::milliseconds(1)));
    out.push_back({status ? status->code : -1, p->output()});
  }
  return out;
}

// Two "hosts" of two processes each.
TestProcess::Env two_hosts(int i) { return {{"SPMD_HOST_ID", i < 2 ? "host-a" : "host-b"}}; }

void expect_verified(const std::vector<Outcome>& outcomes, const std::string& transport) {
  for (size_t i = 0; i < outcomes.size(); ++i) {
    const Outcome& o = outcomes[i];
    EXPECT_EQ(o.code, 0) << "process " << i << ":\n" << o.output;
    EXPECT_NE(o.output.find(" failures 0"), std::string::npos) << o.output;
    EXPECT_EQ(o.output.find("FAIL"), std::string::npos) << o.output;
    EXPECT_NE(o.output.find("world transport " + expected_transport(transport)), std::string::npos)
        << o.output;
  }
}

TEST(Collectives, TwoProcessesOverSharedMemoryMatchTheReference) {
  expect_verified(run_cluster(2, 1, {"verify", "--large"}), "shm");
}

TEST(Collectives, LargePayloadsByReferenceWhenSingleCopyIsOnMatchTheReference) {
  SKIP_OVER_UCX("about spmd's shared memory");
  expect_verified(run_cluster(2, 2, {"verify", "--large"}, {{"SPMD_SHM_SINGLE_COPY", "1"}}), "shm");
}

// The number after `key` in the probe's output, -1 when it is not there.
long number_after(const std::string& output, const std::string& key) {
  const size_t at = output.find(key);
  return at == std::string::npos ? -1 : std::stol(output.substr(at + key.size()));
}

// Every process's payloads read straight out of its peers' comm memory and written straight into
// it, from its "comm memory: R payloads read from peers, W written to peers" line: above zero
// where `read`/`written` is true, zero where false, not checked where nullopt.
void expect_peer_payloads(const std::vector<Outcome>& outcomes, std::optional<bool> read,
                          bool written) {
  for (const Outcome& o : outcomes) {
    const long r = number_after(o.output, "comm memory: ");
    const long w = number_after(o.output, " payloads read from peers, ");
    if (read) {
      EXPECT_TRUE(*read ? r > 0 : r == 0) << o.output;
    }
    EXPECT_TRUE(written ? w > 0 : w == 0) << o.output;
  }
}

TEST(Collectives, LargePayloadsInCommMemoryAreReadFromTheSendersBufferAndMatchTheReference) {
  SKIP_OVER_UCX("about spmd's shared memory");
  // Three processes: the reduce-scatter's payloads land in scratch before they are reduced, and
  // the all-gather's straight in the output. Large all-reduces write their blocks into every
  // process's output, uneven blocks included (70001 elements).
  const auto outcomes = run_cluster(3, 1, {"verify", "--large", "--comm-memory"});
  expect_verified(outcomes, "shm");
  expect_peer_payloads(outcomes, true, true);
}

TEST(Collectives, TwoProcessesReduceStraightOutOfEachOthersCommMemory) {
  SKIP_OVER_UCX("about spmd's shared memory");
  const auto outcomes = run_cluster(2, 1, {"verify", "--large", "--comm-memory"});
  expect_verified(outcomes, "shm");
  expect_peer_payloads(outcomes, true, true);
}

TEST(Collectives, AllReduceFallsBackTogetherWhenOneProcessUsesOrdinaryMemory) {
  SKIP_OVER_UCX("about spmd's shared memory");
  // Every process offers its buffers; the last one's are not comm memory, so all of them run the
  // reduce-scatter and all-gather instead, and nobody writes into a peer.
  for (int n : {2, 3}) {
    const auto outcomes =
        run_cluster(n, 1, {"verify", "--large", "--comm-memory", "--except-last"});
    expect_verified(outcomes, "shm");
    expect_peer_payloads(outcomes, std::nullopt, false);
  }
}

TEST(Collectives, WithBufferMappingOffCommMemoryGoesThroughTheRings) {
  SKIP_OVER_UCX("about spmd's shared memory");
  const auto outcomes =
      run_cluster(2, 1, {"verify", "--large", "--comm-memory"}, {{"SPMD_SHM_MAP_BUFFERS", "0"}});
  expect_verified(outcomes, "shm");
  expect_peer_payloads(outcomes, false, false);
}

TEST(Collectives, OrdinaryMemoryGoesThroughTheRings) {
  SKIP_OVER_UCX("about spmd's shared memory");
  const auto outcomes = run_cluster(2, 1, {"verify", "--large"});
  expect_verified(outcomes, "shm");
  expect_peer_payloads(outcomes, false, false);
}

TEST(Collectives, ThreeProcessesWithTwoDevicesEachMatchTheReference) {
  expect_verified(run_cluster(3, 2, {"verify", "--large"}), "shm");
}

TEST(Collectives, FourProcessesMatchTheReference) {
  expect_verified(run_cluster(4, 1, {"verify"}), "shm");
}

TEST(Collectives, OneProcessWithThreeDevicesCombinesInMemory) {
  expect_verified(run_cluster(1, 3, {"verify", "--large"}), "local");
}

TEST(Collectives, ForcedTcpMatchesTheReference) {
  SKIP_OVER_UCX("about spmd's TCP");
  expect_verified(run_cluster(3, 2, {"verify", "--large"}, {{"SPMD_TRANSPORT", "tcp"}}), "tcp");
}

TEST(Collectives, SeveralTcpConnectionsPerPeerMatchTheReference) {
  SKIP_OVER_UCX("about spmd's TCP");
  expect_verified(run_cluster(3, 1, {"verify", "--large"},
                              {{"SPMD_TRANSPORT", "tcp"}, {"SPMD_TCP_STREAMS", "3"}}),
                  "tcp");
}

TEST(Collectives, ProcessesWithDifferentHostIdsTalkTcpAcrossAndShmWithin) {
  SKIP_OVER_UCX_SM("UCX's shared memory does not cross hosts");
  expect_verified(run_cluster(4, 1, {"verify", "--large"}, {}, two_hosts), "shm+tcp");
}

TEST(Collectives, AMismatchSeenOnlyByAHostLeaderReachesEveryParticipant) {
  SKIP_OVER_UCX_SM("UCX's shared memory does not cross hosts");
  // Large enough for hierarchical all-reduce: process 3 talks only to its host's leader, 2.
  auto outcomes = run_cluster(4, 1, {"mismatch-large-count"}, {}, two_hosts, 60s);
  for (size_t i = 0; i < outcomes.size(); ++i) {
    EXPECT_NE(outcomes[i].output.find("error CollectiveMismatch: collective mismatch: process " +
                                      std::to_string(i) + " called"),
              std::string::npos)
        << outcomes[i].output;
    EXPECT_NE(outcomes[i].output.find("x 100001"), std::string::npos) << outcomes[i].output;
  }
}

TEST(Collectives, SplitByParityGivesIndependentGroups) {
  auto outcomes = run_cluster(4, 1, {"split"});
  for (const Outcome& o : outcomes) {
    EXPECT_EQ(o.code, 0) << o.output;
    EXPECT_NE(o.output.find(" of 2 sum "), std::string::npos) << o.output;
    EXPECT_NE(o.output.find(" ok"), std::string::npos) << o.output;
  }
}

TEST(Collectives, ACommunicatorKeptPastShutdownFailsClearlyAndIsDroppedSafely) {
  for (const Outcome& o : run_cluster(2, 1, {"after-shutdown"}, {}, nullptr, 60s)) {
    EXPECT_EQ(o.code, 0) << o.output;
    EXPECT_NE(o.output.find("error FailedPrecondition: spmd::distributed::shutdown() was called"),
              std::string::npos)
        << o.output;
  }
}

// Ranks of one process: send/recv through the group's in-memory mailbox, and a split whose
// local peers share the group the lowest of them made.
TEST(Collectives, RanksOfOneProcessSendRecvAndSplitThroughMemory) {
  for (const Outcome& o : run_cluster(2, 2, {"local-p2p-split"})) {
    EXPECT_EQ(o.code, 0) << o.output;
    EXPECT_EQ(o.output.find("WRONG"), std::string::npos) << o.output;
    size_t oks = 0;
    for (size_t at = o.output.find("local p2p rank"); at != std::string::npos;
         at = o.output.find("local p2p rank", at + 1)) {
      ++oks;
    }
    EXPECT_EQ(oks, 2u) << o.output;  // both of the process's ranks reported
  }
}

TEST(Collectives, SendAndRecvPassATokenAroundARing) {
  for (const Outcome& o : run_cluster(3, 1, {"p2p"})) {
    EXPECT_EQ(o.code, 0) << o.output;
    EXPECT_NE(o.output.find("p2p got"), std::string::npos) << o.output;
    EXPECT_NE(o.output.find(" ok"), std::string::npos) << o.output;
  }
}

// Every process must raise CollectiveMismatch naming both calls, within the test's limit.
void expect_mismatch_everywhere(const std::string& how, const std::string& detail) {
  auto outcomes = run_cluster(3, 1, {"mismatch-" + how}, {}, nullptr, 60s);
  for (size_t i = 0; i < outcomes.size(); ++i) {
    const Outcome& o = outcomes[i];
    EXPECT_EQ(o.code, 0) << o.output;
    EXPECT_NE(o.output.find("error CollectiveMismatch: collective mismatch: process " +
                            std::to_string(i) + " called"),
              std::string::npos)
        << o.output;
    EXPECT_NE(o.output.find(detail), std::string::npos) << o.output;
  }
}

TEST(Collectives, ADifferentCountRaisesCollectiveMismatchInAll) {
  expect_mismatch_everywhere("count", "(different element count)");
}

TEST(Collectives, ADifferentOpRaisesCollectiveMismatchInAll) {
  expect_mismatch_everywhere("op", "(different operation)");
}

TEST(Collectives, ADifferentDtypeRaisesCollectiveMismatchInAll) {
  expect_mismatch_everywhere("dtype", "(different dtype)");
}

TEST(Collectives, ADifferentOrderRaisesCollectiveMismatchInAll) {
  expect_mismatch_everywhere("order", "barrier #1");
}

TEST(Collectives, AnEpilogueOnSomeParticipantsOnlyRaisesCollectiveMismatchInAll) {
  expect_mismatch_everywhere("epilogue", "(different epilogue)");
}

TEST(Collectives, ADifferentRootRaisesCollectiveMismatchInAll) {
  expect_mismatch_everywhere("root", "(different root)");
}

// The last process SIGKILLs itself between two all_reduces; the others are blocked in the
// second and must raise PeerFailure naming it within 5 s.
std::vector<Outcome> expect_kill_reported(const TestProcess::Env& env,
                                          const std::vector<std::string>& args = {}) {
  std::vector<std::string> argv = {"kill"};
  argv.insert(argv.end(), args.begin(), args.end());
  auto outcomes = run_cluster(3, 1, argv, env, nullptr, 60s);
  EXPECT_NE(outcomes[2].output.find("dying"), std::string::npos) << outcomes[2].output;
  for (int i = 0; i < 2; ++i) {
    const Outcome& o = outcomes[i];
    std::smatch m;
    const bool reported =
        std::regex_search(o.output, m, std::regex("error PeerFailure after (\\d+) ms: ([^\n]*)"));
    EXPECT_TRUE(reported) << o.output;
    if (!reported) continue;
    EXPECT_LT(std::stoi(m[1]), 5000) << o.output;
    EXPECT_NE(m[2].str().find("process 2 (host "), std::string::npos) << o.output;
  }
  return outcomes;
}

TEST(Collectives, AParticipantKilledMidCollectiveIsReportedWithinFiveSecondsOverShm) {
  expect_kill_reported({});
}

// The survivors mapped the dead process's buffers in the all-reduce before: its memory outlives
// it in their mappings, and its offer never comes.
TEST(Collectives, AParticipantKilledMidAllReduceOverCommMemoryIsReportedWithinFiveSeconds) {
  SKIP_OVER_UCX("about spmd's shared memory");
  expect_peer_payloads(expect_kill_reported({}, {"--comm-memory"}), std::nullopt, true);
}

TEST(Collectives, AParticipantKilledMidCollectiveIsReportedWithinFiveSecondsOverTcp) {
  SKIP_OVER_UCX("about spmd's TCP");
  expect_kill_reported({{"SPMD_TRANSPORT", "tcp"}});
}

// The error names who did not arrive and says what it is doing now, from the service's live
// view: process 2 reported (within its 1 s activity tick) that it finished all_reduce #0.
TEST(Collectives, ACallSomeoneSkipsTimesOutNamingTheAbsentParticipantAndWhatItDoes) {
  auto outcomes = run_cluster(3, 1, {"absent"}, {{"SPMD_COLLECTIVE_TIMEOUT", "2"}}, nullptr, 60s);
  for (int i = 0; i < 2; ++i) {
    const std::string& out = outcomes[i].output;
    EXPECT_NE(out.find("error DeadlineExceeded: all_reduce #1"), std::string::npos) << out;
    EXPECT_NE(out.find("process 2 (host "), std::string::npos) << out;
    EXPECT_NE(out.find("did not arrive"), std::string::npos) << out;
    EXPECT_NE(out.find("Now: process 2 (host "), std::string::npos) << out;
    EXPECT_NE(out.find("has been running its own code since it finished all_reduce #0, "),
              std::string::npos)
        << out;
  }
}

// Over UCX spmd has defaults for a few of UCX's variables (ucx_transport.h): within a host, large
// messages pipelined through shared memory; across hosts, larger TCP segments. A variable the
// user set is kept — with TCP's send segment, which must not outgrow the receive segment the
// user chose, at UCX's default — and the startup log says which is which.
TEST(Collectives, OverUcxTheLogNamesSpmdsDefaultsForUcxAndTheUsersSettingsAreKept) {
  if (!ucx_tls()) GTEST_SKIP() << "about UCX: run with SPMD_TEST_UCX_TLS";
  const auto outcomes = run_cluster(
      2, 1, {"verify", "--large"},
      {{"SPMD_LOG_LEVEL", "info"}, {"UCX_RNDV_THRESH", "128k"}, {"UCX_TCP_RX_SEG_SIZE", "32k"}});
  expect_verified(outcomes, "shm");
  const std::string expected = ucx_tls() == "sm"
                                   ? "ucx within this host: UCX_RNDV_THRESH=128k (as set), "
                                     "UCX_MM_SEG_SIZE=32832 (spmd's default)"
                                   : "ucx across hosts: UCX_TCP_RX_SEG_SIZE=32k (as set)";
  for (const Outcome& o : outcomes) {
    EXPECT_NE(o.output.find(expected), std::string::npos) << o.output;
    EXPECT_EQ(o.output.find("UCX_TCP_TX_SEG_SIZE"), std::string::npos) << o.output;
  }
}

// Two processes each send 16 MiB to the other before receiving (MPI deadlocks here too): the
// deadline ends it in both, naming the other process and what went wrong.
TEST(Collectives, CrossedSendsEndInAnErrorNamingThePair) {
  SKIP_OVER_UCX(
      "UCX completes a send once it holds the bytes at the receiver, so crossed sends may "
      "complete there, as with MPI's eager protocol, depending on UCX's transport");
  auto outcomes =
      run_cluster(2, 1, {"crossed-sends"}, {{"SPMD_COLLECTIVE_TIMEOUT", "2"}}, nullptr, 60s);
  for (int i = 0; i < 2; ++i) {
    const std::string& out = outcomes[i].output;
    EXPECT_EQ(outcomes[i].code, 0) << out;
    EXPECT_NE(out.find("ok crossed sends: send_recv #0"), std::string::npos) << out;
    EXPECT_NE(out.find("with process " + std::to_string(1 - i) + " (host "), std::string::npos)
        << out;
    EXPECT_NE(out.find("if both sides send to each other before receiving"), std::string::npos)
        << out;
  }
}

}  // namespace
}  // namespace spmd
