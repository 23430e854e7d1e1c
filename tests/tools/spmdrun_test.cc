// spmdrun as users run it: output prefixes, the environment it sets, one failure stopping all,
// Ctrl-C, the job timeout and the TERM-then-KILL grace period.
#include <gtest/gtest.h>
#include <signal.h>

#include <regex>
#include <string>

#include "support/test_process.h"

namespace spmd {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using testing::TestProcess;

const std::string kSpmdrun = SPMD_TEST_SPMDRUN;

std::vector<std::string> spmdrun(std::vector<std::string> args, const std::string& script) {
  std::vector<std::string> argv = {kSpmdrun};
  argv.insert(argv.end(), args.begin(), args.end());
  argv.insert(argv.end(), {"--", "sh", "-c", script});
  return argv;
}

// The pids the children printed as "pid <n>".
std::vector<pid_t> printed_pids(const std::string& output) {
  std::vector<pid_t> pids;
  const std::regex re("pid (\\d+)");
  for (auto it = std::sregex_iterator(output.begin(), output.end(), re);
       it != std::sregex_iterator(); ++it) {
    pids.push_back(std::stoi((*it)[1]));
  }
  return pids;
}

bool alive(pid_t pid) { return kill(pid, 0) == 0; }

TEST(Spmdrun, PrefixesEveryLineWithTheProcessIndex) {
  TestProcess run(spmdrun({"-n", "2"},
                          "echo out-$SPMD_PROCESS_ID; echo err-$SPMD_PROCESS_ID >&2; "
                          "printf no-newline"));
  auto status = run.wait(30s);
  ASSERT_TRUE(status);
  EXPECT_EQ(status->code, 0) << run.output();
  for (const char* line : {"[0] out-0\n", "[1] out-1\n", "[0] err-0\n", "[1] err-1\n",
                           "[0] no-newline\n", "[1] no-newline\n"}) {
    EXPECT_NE(run.output().find(line), std::string::npos) << line << " in\n" << run.output();
  }
}

TEST(Spmdrun, SetsTheClusterEnvironment) {
  TestProcess run(spmdrun({"-n", "2", "--cpu-devices", "3", "--auth-token", "tok"},
                          "echo $SPMD_NUM_PROCESSES $SPMD_PROCESS_ID $SPMD_CPU_DEVICES "
                          "$SPMD_AUTH_TOKEN $SPMD_COORDINATOR_ADDRESS"));
  auto status = run.wait(30s);
  ASSERT_TRUE(status);
  EXPECT_EQ(status->code, 0);
  EXPECT_TRUE(std::regex_search(run.output(), std::regex(R"(\[0\] 2 0 3 tok 127\.0\.0\.1:\d+)")))
      << run.output();
  EXPECT_TRUE(std::regex_search(run.output(), std::regex(R"(\[1\] 2 1 3 tok 127\.0\.0\.1:\d+)")))
      << run.output();
}

TEST(Spmdrun, OneFailureStopsTheOthersAndExitsWithItsCode) {
  const auto start = Clock::now();
  TestProcess run(spmdrun({"-n", "3"},
                          "echo pid $$; if [ $SPMD_PROCESS_ID = 1 ]; then sleep 0.3; exit 7; fi; "
                          "exec sleep 60"));
  auto status = run.wait(30s);
  ASSERT_TRUE(status) << run.output();
  EXPECT_EQ(status->code, 7) << run.output();
  EXPECT_LT(Clock::now() - start, 10s);
  EXPECT_TRUE(std::regex_search(
      run.output(),
      std::regex(R"(spmdrun: process 1 \(pid \d+\) exited with code 7; stopping the 2 other)")))
      << run.output();
  for (pid_t pid : printed_pids(run.output())) EXPECT_FALSE(alive(pid)) << pid;
}

TEST(Spmdrun, AProcessKilledBySignalIsReportedWith128PlusTheSignal) {
  TestProcess run(
      spmdrun({"-n", "2"}, "if [ $SPMD_PROCESS_ID = 0 ]; then kill -9 $$; fi; exec sleep 60"));
  auto status = run.wait(30s);
  ASSERT_TRUE(status);
  EXPECT_EQ(status->code, 137) << run.output();
  EXPECT_NE(run.output().find("was killed by signal 9"), std::string::npos) << run.output();
}

// Process 0 exits 70 (it stopped because a peer failed) before process 1, the peer, is seen to
// die: spmdrun still names process 1 as the cause.
TEST(Spmdrun, NamesTheProcessThatFailedNotTheOneThatStoppedBecauseOfIt) {
  TestProcess run(
      spmdrun({"-n", "2"}, "if [ $SPMD_PROCESS_ID = 0 ]; then exit 70; fi; sleep 0.5; kill -9 $$"));
  auto status = run.wait(30s);
  ASSERT_TRUE(status);
  EXPECT_EQ(status->code, 137) << run.output();
  EXPECT_TRUE(std::regex_search(
      run.output(), std::regex(R"(spmdrun: process 1 \(pid \d+\) was killed by signal 9)")))
      << run.output();
}

// A frozen process (SIGSTOP) never exits: when another exits 70 because of it, spmdrun names the
// frozen one first.
TEST(Spmdrun, NamesAFrozenProcessAsTheCause) {
  TestProcess run(
      spmdrun({"-n", "2", "--grace", "1"},
              "if [ $SPMD_PROCESS_ID = 1 ]; then kill -STOP $$; fi; sleep 0.5; exit 70"));
  auto status = run.wait(30s);
  ASSERT_TRUE(status);
  EXPECT_EQ(status->code, 70) << run.output();
  EXPECT_TRUE(std::regex_search(
      run.output(), std::regex(R"(spmdrun: process 1 \(pid \d+\) is stopped \(SIGSTOP)")))
      << run.output();
}

// With no other failure within spmdrun's wait, the process that exited 70 is named, with a note.
TEST(Spmdrun, AProcessThatStoppedBecauseOfAPeerIsNamedWhenNothingElseFails) {
  TestProcess run(spmdrun({"-n", "2"}, "if [ $SPMD_PROCESS_ID = 0 ]; then exit 70; fi; sleep 60"));
  auto status = run.wait(30s);
  ASSERT_TRUE(status);
  EXPECT_EQ(status->code, 70) << run.output();
  EXPECT_NE(run.output().find("process 0 (pid"), std::string::npos) << run.output();
  EXPECT_NE(run.output().find("it stopped because another process failed"), std::string::npos)
      << run.output();
}

// --max-restarts: the failed job is stopped and started again, told which attempt it is.
TEST(Spmdrun, RestartsAFailedJobAndTellsItTheAttempt) {
  TestProcess run(spmdrun({"-n", "2", "--max-restarts", "2"},
                          "echo attempt-$SPMD_RESTART_COUNT-$SPMD_COORDINATOR_ADDRESS; "
                          "if [ $SPMD_RESTART_COUNT -lt 2 ] && [ $SPMD_PROCESS_ID = 1 ]; then "
                          "exit 3; fi"));
  auto status = run.wait(60s);
  ASSERT_TRUE(status);
  EXPECT_EQ(status->code, 0) << run.output();
  const std::string out = run.output();
  EXPECT_NE(out.find("restarting the job (restart 1 of 2) after: process 1"), std::string::npos)
      << out;
  EXPECT_NE(out.find("restarting the job (restart 2 of 2)"), std::string::npos) << out;
  EXPECT_NE(out.find("[0] attempt-2-"), std::string::npos) << out;
}

TEST(Spmdrun, GivesUpAfterMaxRestartsWithTheFailedCode) {
  TestProcess run(spmdrun({"-n", "2", "--max-restarts", "1"},
                          "if [ $SPMD_PROCESS_ID = 0 ]; then exit 5; fi; exec sleep 60"));
  auto status = run.wait(60s);
  ASSERT_TRUE(status);
  EXPECT_EQ(status->code, 5) << run.output();
  const std::string out = run.output();
  EXPECT_NE(out.find("restart 1 of 1"), std::string::npos) << out;
  EXPECT_EQ(out.find("restart 2 of"), std::string::npos) << out;
}

TEST(Spmdrun, ATimeoutIsNotRestarted) {
  TestProcess run(spmdrun({"-n", "1", "--max-restarts", "3", "--timeout", "0.5"}, "exec sleep 60"));
  auto status = run.wait(30s);
  ASSERT_TRUE(status);
  EXPECT_EQ(status->code, 124) << run.output();
  EXPECT_EQ(run.output().find("restarting"), std::string::npos) << run.output();
}

TEST(Spmdrun, CtrlCStopsEveryProcess) {
  TestProcess run(spmdrun({"-n", "2"}, "echo pid $$; exec sleep 60"));
  ASSERT_TRUE(run.wait_for_output("[1] pid", 10s));
  ASSERT_TRUE(run.wait_for_output("[0] pid", 10s));
  kill(run.pid(), SIGINT);
  auto status = run.wait(15s);
  ASSERT_TRUE(status) << run.output();
  EXPECT_EQ(status->code, 130);
  EXPECT_NE(run.output().find("interrupted"), std::string::npos) << run.output();
  auto pids = printed_pids(run.output());
  ASSERT_EQ(pids.size(), 2u);
  for (pid_t pid : pids) EXPECT_FALSE(alive(pid)) << pid;
}

TEST(Spmdrun, TheJobTimeoutStopsEveryProcessWith124) {
  TestProcess run(spmdrun({"-n", "2", "--timeout", "0.5"}, "exec sleep 60"));
  auto status = run.wait(15s);
  ASSERT_TRUE(status);
  EXPECT_EQ(status->code, 124) << run.output();
  EXPECT_NE(run.output().find("timeout of 0.5"), std::string::npos) << run.output();
}

TEST(Spmdrun, AProcessIgnoringTermIsKilledAfterTheGracePeriod) {
  const auto start = Clock::now();
  TestProcess run(spmdrun({"-n", "1", "--timeout", "0.3", "--grace", "0.5"},
                          "trap '' TERM; echo pid $$; while true; do sleep 0.1; done"));
  auto status = run.wait(15s);
  ASSERT_TRUE(status);
  EXPECT_EQ(status->code, 124);
  EXPECT_GE(Clock::now() - start, 700ms);
  EXPECT_NE(run.output().find("did not exit after SIGTERM; sending SIGKILL"), std::string::npos)
      << run.output();
}

TEST(Spmdrun, AProgramThatCannotRunIsReported) {
  TestProcess run({kSpmdrun, "-n", "2", "--", "/nonexistent/program"});
  auto status = run.wait(15s);
  ASSERT_TRUE(status);
  EXPECT_EQ(status->code, 127);
  EXPECT_NE(run.output().find("cannot execute '/nonexistent/program'"), std::string::npos)
      << run.output();
}

TEST(Spmdrun, UsageErrorsAreReportedWithoutStartingAnything) {
  TestProcess no_program({kSpmdrun, "-n", "2"});
  auto s1 = no_program.wait(15s);
  ASSERT_TRUE(s1);
  EXPECT_NE(s1->code, 0);
  EXPECT_NE(no_program.output().find("no program given"), std::string::npos);
  TestProcess bad_n({kSpmdrun, "-n", "0", "--", "true"});
  auto s2 = bad_n.wait(15s);
  ASSERT_TRUE(s2);
  EXPECT_NE(s2->code, 0);
}

}  // namespace
}  // namespace spmd
