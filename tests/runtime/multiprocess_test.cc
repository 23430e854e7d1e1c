// Real processes forming real clusters: through spmdrun, by hand with explicit arguments (the
// seed's two shells), and against spmd-coordinator. Every process runs under a deadline and is
// killed by pid if a test fails.
#include <gtest/gtest.h>
#include <signal.h>

#include <memory>
#include <regex>
#include <string>

#include "common/subprocess.h"
#include "support/test_process.h"

namespace spmd {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using testing::TestProcess;

const std::string kProbe = SPMD_TEST_PROBE;
const std::string kSpmdrun = SPMD_TEST_SPMDRUN;
const std::string kCoordinator = SPMD_TEST_COORDINATOR;

std::vector<std::string> probe(const std::string& mode, const std::string& address, int num, int id,
                               std::vector<std::string> extra = {}) {
  std::vector<std::string> argv = {
      kProbe, mode, "--address", address, "--num", std::to_string(num), "--id", std::to_string(id)};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return argv;
}

std::string local_address() { return "127.0.0.1:" + std::to_string(tools::free_port()); }

// The "devices: …" line a process printed.
std::string devices_line(const std::string& output) {
  std::smatch m;
  if (std::regex_search(output, m, std::regex("devices:[^\n]*"))) return m.str();
  return "";
}

TEST(Multiprocess, SpmdrunProcessesAgreeOnTheGlobalDeviceList) {
  TestProcess run({kSpmdrun, "-n", "3", "--cpu-devices", "2", "--", kProbe, "report"});
  auto status = run.wait(60s);
  ASSERT_TRUE(status) << run.output();
  EXPECT_EQ(status->code, 0) << run.output();
  const std::string expected = "devices: 0@0:0 1@0:1 2@1:0 3@1:1 4@2:0 5@2:1";
  for (int i = 0; i < 3; ++i) {
    EXPECT_NE(run.output().find("[" + std::to_string(i) + "] " + expected), std::string::npos)
        << run.output();
    EXPECT_NE(
        run.output().find("[" + std::to_string(i) + "] process " + std::to_string(i) + " of 3"),
        std::string::npos);
    EXPECT_NE(run.output().find("[" + std::to_string(i) + "] local 2"), std::string::npos);
  }
}

TEST(Multiprocess, ExplicitArgumentsInTwoShellsLikeTheSeed) {
  const std::string address = local_address();
  TestProcess p0(probe("report", address, 2, 0), {{"SPMD_CPU_DEVICES", "3"}});
  TestProcess p1(probe("report", address, 2, 1), {{"SPMD_CPU_DEVICES", "3"}});
  auto s0 = p0.wait(30s);
  auto s1 = p1.wait(30s);
  ASSERT_TRUE(s0 && s1);
  EXPECT_EQ(s0->code, 0) << p0.output();
  EXPECT_EQ(s1->code, 0) << p1.output();
  EXPECT_EQ(devices_line(p0.output()), "devices: 0@0:0 1@0:1 2@0:2 3@1:0 4@1:1 5@1:2");
  EXPECT_EQ(devices_line(p1.output()), devices_line(p0.output()));
  EXPECT_NE(p1.output().find("local 3"), std::string::npos);
}

// Seed 001: "Make sure all processes has the same number of local devices." Both processes
// fail initialize(), each naming who has how many, instead of forming a cluster whose meshes
// and pmaps would not line up.
TEST(Multiprocess, DifferentLocalDeviceCountsFailInitializeInEveryProcess) {
  const std::string address = local_address();
  TestProcess p0(probe("report", address, 2, 0));
  TestProcess p1(probe("report", address, 2, 1), {{"SPMD_CPU_DEVICES", "3"}});
  auto s0 = p0.wait(30s);
  auto s1 = p1.wait(30s);
  ASSERT_TRUE(s0 && s1);
  for (const TestProcess* p : {&p0, &p1}) {
    const std::string out = p->output();
    EXPECT_NE(out.find("InvalidArgument: every process must have the same number of local "
                       "devices"),
              std::string::npos)
        << out;
    EXPECT_NE(out.find("process 0 (on "), std::string::npos) << out;
    EXPECT_NE(out.find(") has 1 cpu device;"), std::string::npos) << out;
    EXPECT_NE(out.find(") has 3 cpu devices"), std::string::npos) << out;
  }
  EXPECT_NE(s0->code, 0);
  EXPECT_NE(s1->code, 0);
}

TEST(Multiprocess, KeyValueStoreCrossesProcesses) {
  TestProcess run({kSpmdrun, "-n", "3", "--", kProbe, "kv-exchange"});
  auto status = run.wait(60s);
  ASSERT_TRUE(status);
  EXPECT_EQ(status->code, 0) << run.output();
  EXPECT_NE(run.output().find("[0] got from 1"), std::string::npos) << run.output();
  EXPECT_NE(run.output().find("[2] got from 0"), std::string::npos) << run.output();
}

// Three probes in "barrier" mode: processes 0 and 1 wait at a barrier that never completes,
// process 2 sleeps. Returns once all three are in place.
struct BarrierCluster {
  explicit BarrierCluster(const std::vector<std::string>& extra = {},
                          const std::string& mode = "barrier") {
    const std::string address = local_address();
    for (int id = 0; id < 3; ++id) {
      p.push_back(std::make_unique<TestProcess>(probe(mode, address, 3, id, extra)));
    }
    ready = p[2]->wait_for_output("sleeping pid", 30s) &&
            p[0]->wait_for_output("waiting pid", 10s) && p[1]->wait_for_output("waiting pid", 10s);
  }
  // Every process but `dead` must exit 70 within `within`, naming process `dead` and its pid,
  // and saying `reason` when given.
  void expect_others_name(int dead, std::chrono::milliseconds within,
                          const std::string& reason = "") {
    const auto start = Clock::now();
    const std::string named = "process " + std::to_string(dead) + " (host ";
    const std::string pid = "pid " + std::to_string(p[dead]->pid()) + ")";
    for (int i = 0; i < 3; ++i) {
      if (i == dead) continue;
      auto status = p[i]->wait(within + 10s);
      ASSERT_TRUE(status) << "did not exit: " << p[i]->output();
      EXPECT_LT(Clock::now() - start, within) << p[i]->output();
      EXPECT_EQ(status->code, 70) << p[i]->output();
      EXPECT_NE(p[i]->output().find(named), std::string::npos) << p[i]->output();
      EXPECT_NE(p[i]->output().find(pid), std::string::npos) << p[i]->output();
      EXPECT_NE(p[i]->output().find(reason), std::string::npos) << p[i]->output();
      EXPECT_EQ(p[i]->output().find("barrier returned"), std::string::npos);
    }
  }
  std::vector<std::unique_ptr<TestProcess>> p;
  bool ready = false;
};

TEST(Multiprocess, AProcessKilledDuringABarrierIsNamedByTheOthersWithinFiveSeconds) {
  BarrierCluster cluster;
  ASSERT_TRUE(cluster.ready) << cluster.p[2]->output();
  kill(cluster.p[2]->pid(), SIGKILL);
  cluster.expect_others_name(2, 5s);
}

TEST(Multiprocess, WhenProcessZeroDiesWithTheServiceTheOthersNameIt) {
  BarrierCluster cluster;
  ASSERT_TRUE(cluster.ready) << cluster.p[0]->output();
  kill(cluster.p[0]->pid(), SIGKILL);
  cluster.expect_others_name(0, 5s);
}

// The waiting processes' barrier fails with PeerFailure before the default reaction has printed
// its line, and the program lets it leave main(): still exit 70 naming the dead process, not
// std::terminate's SIGABRT (which made spmdrun blame the survivor).
TEST(Multiprocess, APeerFailureTheProgramDoesNotCatchStillEndsInTheNamedExit) {
  for (int round = 0; round < 3; ++round) {
    BarrierCluster cluster({}, "uncaught");
    ASSERT_TRUE(cluster.ready) << cluster.p[2]->output();
    kill(cluster.p[2]->pid(), SIGKILL);
    cluster.expect_others_name(2, 5s);
    for (int i = 0; i < 2; ++i) {
      EXPECT_EQ(cluster.p[i]->output().find("terminate called"), std::string::npos)
          << cluster.p[i]->output();
    }
  }
}

TEST(Multiprocess, AStoppedProcessIsDetectedAfterTheHeartbeatTimeout) {
  BarrierCluster cluster({"--heartbeat", "2"});
  ASSERT_TRUE(cluster.ready) << cluster.p[2]->output();
  const auto stopped_at = Clock::now();
  kill(cluster.p[2]->pid(), SIGSTOP);
  cluster.expect_others_name(2, 8s, "no heartbeat for 2000 ms");
  const auto took = Clock::now() - stopped_at;
  EXPECT_GE(took, 1500ms);
  EXPECT_LT(took, 8s);
  kill(cluster.p[2]->pid(), SIGKILL);
}

TEST(Multiprocess, WithAFailureHandlerBlockedCallsThrowPeerFailure) {
  const std::string address = local_address();
  TestProcess p0(probe("handler", address, 2, 0));
  TestProcess victim(probe("handler", address, 2, 1));
  ASSERT_TRUE(victim.wait_for_output("sleeping pid", 30s)) << victim.output();
  ASSERT_TRUE(p0.wait_for_output("waiting pid", 10s));
  kill(victim.pid(), SIGKILL);
  auto status = p0.wait(15s);
  ASSERT_TRUE(status) << p0.output();
  EXPECT_EQ(status->code, 3) << p0.output();
  EXPECT_NE(p0.output().find("handler heard: process 1 (host "), std::string::npos) << p0.output();
  EXPECT_NE(p0.output().find("error PeerFailure: process 1"), std::string::npos) << p0.output();
}

// Runs one probe alone and returns (exit code, output).
std::pair<int, std::string> run_alone(std::vector<std::string> argv, TestProcess::Env env = {}) {
  TestProcess p(std::move(argv), std::move(env));
  auto status = p.wait(30s);
  return {status ? status->code : -1, p.output()};
}

TEST(InitializeErrors, ASecondInitializeIsRefused) {
  auto [code, out] = run_alone({kProbe, "double-init"}, {{"SPMD_NUM_PROCESSES", "1"}});
  EXPECT_EQ(code, 1);
  EXPECT_NE(
      out.find("error FailedPrecondition: spmd::distributed::initialize() was already called"),
      std::string::npos)
      << out;
}

TEST(InitializeErrors, InitializeAfterADeviceQueryIsRefused) {
  auto [code, out] = run_alone({kProbe, "query-then-init"}, {{"SPMD_NUM_PROCESSES", "1"}});
  EXPECT_EQ(code, 1);
  EXPECT_NE(out.find("devices before initialize: 1"), std::string::npos) << out;
  EXPECT_NE(out.find("error FailedPrecondition"), std::string::npos) << out;
  EXPECT_NE(out.find("before any device query"), std::string::npos) << out;
}

TEST(InitializeErrors, AProcessIdOutsideTheRangeIsRefused) {
  auto [code, out] = run_alone(probe("init", local_address(), 2, 2));
  EXPECT_EQ(code, 1);
  EXPECT_NE(out.find("error InvalidArgument: process_id 2 is outside 0..1"), std::string::npos)
      << out;
}

TEST(InitializeErrors, AMissingArgumentWithNothingToDetectIsNamed) {
  auto [code, out] = run_alone({kProbe, "init", "--num", "2", "--id", "0"});
  EXPECT_EQ(code, 1);
  EXPECT_NE(out.find("error InvalidArgument: initialize() is missing coordinator_address"),
            std::string::npos)
      << out;
}

TEST(InitializeErrors, AnUnreachableCoordinatorIsNamedAfterTheTimeout) {
  const std::string address = local_address();  // nobody listens there
  const auto start = Clock::now();
  auto [code, out] = run_alone(probe("init", address, 2, 1, {"--init-timeout", "1"}));
  EXPECT_EQ(code, 1);
  EXPECT_NE(
      out.find("error DeadlineExceeded: process 1 could not reach the coordination service at " +
               address),
      std::string::npos)
      << out;
  EXPECT_LT(Clock::now() - start, 10s);
}

TEST(InitializeErrors, RegistrationTimesOutNamingWhoDidNotRegister) {
  auto [code, out] = run_alone(probe("init", local_address(), 3, 0, {"--init-timeout", "1"}));
  EXPECT_EQ(code, 1);
  EXPECT_NE(out.find("only 1 of 3 processes registered"), std::string::npos) << out;
  EXPECT_NE(out.find("missing process ids: 1, 2"), std::string::npos) << out;
}

TEST(InitializeErrors, TwoProcessesClaimingOneIdTheSecondIsRefusedAndTheOthersGoOn) {
  const std::string address = local_address();
  TestProcess p0(probe("report", address, 3, 0));
  TestProcess first(probe("report", address, 3, 1));
  std::this_thread::sleep_for(500ms);  // let the first claim of id 1 land
  TestProcess second(probe("report", address, 3, 1));
  auto s2 = second.wait(30s);
  ASSERT_TRUE(s2);
  EXPECT_EQ(s2->code, 1);
  EXPECT_NE(second.output().find("error AlreadyExists: process id 1 is already taken"),
            std::string::npos)
      << second.output();
  EXPECT_NE(second.output().find("pid " + std::to_string(first.pid())), std::string::npos)
      << second.output();
  TestProcess p2(probe("report", address, 3, 2));
  for (TestProcess* p : {&p0, &first, &p2}) {
    auto s = p->wait(30s);
    ASSERT_TRUE(s);
    EXPECT_EQ(s->code, 0) << p->output();
  }
}

TEST(InitializeErrors, DisagreeingProcessCountsAreRefused) {
  const std::string address = local_address();
  TestProcess p0(probe("init", address, 2, 0, {"--init-timeout", "5"}));
  std::this_thread::sleep_for(300ms);
  auto [code, out] = run_alone(probe("init", address, 3, 1));
  EXPECT_EQ(code, 1);
  EXPECT_NE(out.find("error InvalidArgument: process 1 was started with num_processes=3"),
            std::string::npos)
      << out;
}

TEST(InitializeErrors, AWrongAuthTokenIsRefused) {
  const std::string address = local_address();
  TestProcess p0(probe("init", address, 2, 0, {"--token", "right", "--init-timeout", "5"}));
  std::this_thread::sleep_for(300ms);
  auto [code, out] = run_alone(probe("init", address, 2, 1, {"--token", "wrong"}));
  EXPECT_EQ(code, 1);
  EXPECT_NE(out.find("error PermissionDenied: authentication failed"), std::string::npos) << out;
}

TEST(SingleProcess, OneProcessAskedForRunsAlone) {
  auto [code, out] =
      run_alone({kProbe, "report"}, {{"SPMD_CPU_DEVICES", "3"}, {"SPMD_NUM_PROCESSES", "1"}});
  EXPECT_EQ(code, 0) << out;
  EXPECT_NE(out.find("process 0 of 1"), std::string::npos) << out;
  EXPECT_EQ(devices_line(out), "devices: 0@0:0 1@0:1 2@0:2");
}

TEST(SingleProcess, LocalDeviceIdsRestrictTheVisibleDevices) {
  auto [code, out] = run_alone(
      {kProbe, "report"},
      {{"SPMD_CPU_DEVICES", "3"}, {"SPMD_LOCAL_DEVICE_IDS", "0,2"}, {"SPMD_NUM_PROCESSES", "1"}});
  EXPECT_EQ(code, 0) << out;
  EXPECT_EQ(devices_line(out), "devices: 0@0:0 1@0:2");
}

// As JAX: a launch that lost its environment must not become N jobs of one process each.
TEST(SingleProcess, InitializeWithNoClusterAtAllRaisesSayingWhatToDo) {
  auto [code, out] = run_alone({kProbe, "report"});
  EXPECT_EQ(code, 1) << out;
  EXPECT_NE(out.find("error InvalidArgument: initialize() found no cluster"), std::string::npos)
      << out;
  EXPECT_NE(out.find("SPMD_NUM_PROCESSES=1"), std::string::npos) << out;
}

TEST(StandaloneCoordinator, ProcessesJoinItAndItExitsWhenTheyLeave) {
  const int port = tools::free_port();
  TestProcess coordinator({kCoordinator, "--port", std::to_string(port), "--num-processes", "2",
                           "--bind", "127.0.0.1"});
  ASSERT_TRUE(coordinator.wait_for_output("listening", 10s)) << coordinator.output();
  const std::string address = "127.0.0.1:" + std::to_string(port);
  TestProcess p0(probe("external", address, 2, 0));
  TestProcess p1(probe("external", address, 2, 1));
  for (TestProcess* p : {&p0, &p1}) {
    auto s = p->wait(30s);
    ASSERT_TRUE(s);
    EXPECT_EQ(s->code, 0) << p->output();
    EXPECT_EQ(devices_line(p->output()), "devices: 0@0:0 1@1:0");
  }
  auto s = coordinator.wait(15s);
  ASSERT_TRUE(s) << coordinator.output();
  EXPECT_EQ(s->code, 0) << coordinator.output();
  EXPECT_NE(coordinator.output().find("every process has left"), std::string::npos);
}

}  // namespace
}  // namespace spmd
