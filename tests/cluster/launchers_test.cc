// initialize() with no arguments under the real launchers: Slurm's srun (against the one-node
// cluster the SlurmCluster fixture starts), Open MPI's mpirun (4.x, and the 5.x path through
// PMIx) and MPICH's mpiexec.hydra. Each starts 3 processes; all must agree on 3 processes and
// the global device list. A launcher that is missing or cannot start is skipped with the reason.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <regex>
#include <string>

#include "support/test_process.h"

namespace spmd {
namespace {

using namespace std::chrono_literals;
using testing::TestProcess;

const std::string kProbe = SPMD_TEST_PROBE;

bool on_path(const std::string& tool) {
  return std::system(("command -v " + tool + " >/dev/null 2>&1").c_str()) == 0;
}

// Checks that the 3 processes agreed, whatever order their lines came in.
void expect_three_agree(TestProcess& run) {
  auto status = run.wait(90s);
  ASSERT_TRUE(status) << "did not finish:\n" << run.output();
  ASSERT_EQ(status->code, 0) << run.output();
  const std::string out = run.output();
  for (int i = 0; i < 3; ++i) {
    EXPECT_NE(out.find("process " + std::to_string(i) + " of 3"), std::string::npos) << out;
  }
  const std::regex devices("devices: 0@0:0 1@1:0 2@2:0\n");
  const auto count =
      std::distance(std::sregex_iterator(out.begin(), out.end(), devices), std::sregex_iterator());
  EXPECT_EQ(count, 3) << out;
  EXPECT_EQ(out.find("error"), std::string::npos) << out;
}

TEST(Launchers, SrunThreeProcessesInitializeWithoutArguments) {
  const char* dir = std::getenv("SPMD_TEST_SLURM_DIR");
  if (!on_path("srun")) GTEST_SKIP() << "srun is not installed (Debian: slurm-wlm)";
  if (dir == nullptr || access((std::string(dir) + "/ready").c_str(), R_OK) != 0) {
    GTEST_SKIP() << "the test Slurm cluster is not running (SlurmCluster.Start skipped or failed; "
                    "see its output)";
  }
  // --immediate: fail at once rather than queue if the node cannot take the job.
  TestProcess run(
      {"srun", "-n", "3", "--overcommit", "--time=2", "--immediate=30", kProbe, "report"},
      {{"SLURM_CONF", std::string(dir) + "/slurm.conf"}});
  expect_three_agree(run);
}

std::vector<std::string> mpirun_args() {
  std::vector<std::string> args = {"mpirun.openmpi", "-np", "3", "--oversubscribe",
                                   // Keep the launcher's own traffic on loopback.
                                   "--mca", "oob_tcp_if_include", "lo", "--mca",
                                   "btl_tcp_if_include", "lo"};
  if (getuid() == 0) args.push_back("--allow-run-as-root");
  return args;
}

TEST(Launchers, MpirunThreeProcessesInitializeWithoutArguments) {
  if (!on_path("mpirun.openmpi")) GTEST_SKIP() << "Open MPI is not installed (openmpi-bin)";
  auto args = mpirun_args();
  args.insert(args.end(), {kProbe, "report"});
  TestProcess run(args);
  expect_three_agree(run);
}

TEST(Launchers, OpenMpi5PathAgreesThroughTheLaunchersPmixServer) {
  // Open MPI 5's launcher sets no OMPI_MCA_orte_hnp_uri; hiding it from 4.1's processes leaves
  // exactly the variables 5.x gives, and the launcher's real PMIx server.
  if (!on_path("mpirun.openmpi")) GTEST_SKIP() << "Open MPI is not installed (openmpi-bin)";
  auto args = mpirun_args();
  args.insert(args.end(), {"env", "-u", "OMPI_MCA_orte_hnp_uri", kProbe, "report"});
  TestProcess run(args);
  expect_three_agree(run);
}

TEST(Launchers, MpichHydraThreeProcessesInitializeWithoutArguments) {
  if (!on_path("mpiexec.hydra")) GTEST_SKIP() << "MPICH is not installed (Debian: mpich)";
  TestProcess run({"mpiexec.hydra", "-n", "3", "-iface", "lo", kProbe, "report"});
  expect_three_agree(run);
}

}  // namespace
}  // namespace spmd
