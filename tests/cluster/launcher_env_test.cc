// What each launcher's environment yields, from the variables those launchers really set.
#include <gtest/gtest.h>

#include "cluster/cluster_env.h"
#include "cluster/ompi_uri.h"
#include "cluster/pmi1_client.h"
#include "spmd/error.h"
#include "support/fake_env.h"

namespace spmd {
namespace {

using namespace std::chrono_literals;
using testing::env_of;

TEST(SlurmEnv, CoordinatorIsTheFirstStepNodeWithAPortFromTheJobId) {
  auto env = env_of({{"SLURM_JOB_ID", "12345"},
                     {"SLURM_STEP_NODELIST", "node[007-009]"},
                     {"SLURM_NTASKS", "6"},
                     {"SLURM_PROCID", "4"},
                     {"SLURM_LOCALID", "1"}});
  auto slurm = detect_cluster_env(std::nullopt, env);
  ASSERT_NE(slurm, nullptr);
  EXPECT_EQ(slurm->name(), "slurm");
  EXPECT_EQ(slurm->coordinator_address(1s), "node007:" + std::to_string(12345 % 4096 + 61440));
  EXPECT_EQ(slurm->num_processes(), 6);
  EXPECT_EQ(slurm->process_id(), 4);
  EXPECT_EQ(slurm->local_process_id(), 1);
  EXPECT_EQ(slurm->local_device_ids(), std::nullopt);  // CPU devices: all of them
}

TEST(SlurmEnv, SpmdCoordinatorPortOverridesTheDerivedPort) {
  auto slurm = make_slurm_env(env_of(
      {{"SLURM_JOB_ID", "1"}, {"SLURM_STEP_NODELIST", "a"}, {"SPMD_COORDINATOR_PORT", "7777"}}));
  EXPECT_EQ(slurm->coordinator_address(1s), "a:7777");
}

TEST(SlurmEnv, OutsideSrunTheMissingVariableIsNamed) {
  auto slurm = make_slurm_env(env_of({{"SLURM_JOB_ID", "1"}}));
  try {
    slurm->coordinator_address(1s);
    FAIL();
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("SLURM_STEP_NODELIST"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("srun"), std::string::npos);
  }
  EXPECT_THROW(make_slurm_env(env_of({{"SLURM_JOB_ID", "x"}, {"SLURM_STEP_NODELIST", "a"}}))
                   ->coordinator_address(1s),
               InvalidArgument);
}

TEST(Detection, MpirunInsideASlurmAllocationIsOpenMpiNotSlurm) {
  // mpirun's tasks inherit the batch step's SLURM_* variables, with SLURM_PROCID 0 for all.
  auto env = env_of({{"SLURM_JOB_ID", "5"},
                     {"SLURM_PROCID", "0"},
                     {"SLURM_NTASKS", "1"},
                     {"SLURM_STEP_NODELIST", "a"},
                     {"OMPI_COMM_WORLD_SIZE", "4"},
                     {"OMPI_COMM_WORLD_RANK", "2"},
                     {"OMPI_COMM_WORLD_LOCAL_RANK", "2"},
                     {"OMPI_MCA_orte_hnp_uri", "8192.0;tcp://127.0.0.1:1000"}});
  auto detected = detect_cluster_env(std::nullopt, env);
  ASSERT_NE(detected, nullptr);
  EXPECT_EQ(detected->name(), "ompi");
  EXPECT_EQ(detected->process_id(), 2);
}

TEST(Detection, HydraInsideASlurmAllocationIsMpich) {
  auto env =
      env_of({{"SLURM_JOB_ID", "5"}, {"SLURM_PROCID", "0"}, {"PMI_RANK", "3"}, {"PMI_SIZE", "4"}});
  EXPECT_EQ(detect_cluster_env(std::nullopt, env)->name(), "mpich");
  // srun's own PMI plugin sets PMI_RANK equal to SLURM_PROCID: still Slurm.
  auto srun_pmi =
      env_of({{"SLURM_JOB_ID", "5"}, {"SLURM_PROCID", "3"}, {"PMI_RANK", "3"}, {"PMI_SIZE", "4"}});
  EXPECT_EQ(detect_cluster_env(std::nullopt, srun_pmi)->name(), "slurm");
}

TEST(Detection, SpmdrunVariablesComeFirstAndMethodsCanBeNamed) {
  auto env = env_of(
      {{"SPMD_NUM_PROCESSES", "2"}, {"SLURM_JOB_ID", "5"}, {"PMI_RANK", "0"}, {"PMI_SIZE", "2"}});
  EXPECT_EQ(detect_cluster_env(std::nullopt, env)->name(), "env");
  EXPECT_EQ(detect_cluster_env("slurm", env)->name(), "slurm");
  EXPECT_EQ(detect_cluster_env("mpich", env)->name(), "mpich");
  try {
    detect_cluster_env("ompi", env);
    FAIL();
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("OMPI_COMM_WORLD_SIZE"), std::string::npos);
  }
}

TEST(OmpiEnv, Version4CoordinatorIsTheLauncherAddressWithAPortFromTheJobId) {
  auto env = env_of({{"OMPI_MCA_orte_hnp_uri", "1531576320.0;tcp://10.96.0.1,10.148.0.1:34911"},
                     {"OMPI_COMM_WORLD_SIZE", "2"},
                     {"OMPI_COMM_WORLD_RANK", "1"},
                     {"OMPI_COMM_WORLD_LOCAL_RANK", "1"}});
  auto ompi = make_ompi_env(env);
  ASSERT_TRUE(ompi->is_present());
  EXPECT_EQ(ompi->coordinator_address(1s),
            "10.96.0.1:" + std::to_string((1531576320ULL / 4096) % 4096 + 61440));
  EXPECT_EQ(ompi->num_processes(), 2);
  EXPECT_EQ(ompi->local_process_id(), 1);
}

TEST(OmpiUri, ReadsIpv4AndIpv6Launchers) {
  auto v4 = parse_orte_uri("1180958720.0;tcp://192.0.2.2:56113;tcp6://[fd00::2]:60117");
  EXPECT_EQ(v4.job_id, 1180958720u);
  EXPECT_EQ(v4.host, "192.0.2.2");
  auto v6 = parse_orte_uri("1314521088.0;tcp6://[fe80::b9b:ac5d:9cf0:b858,2620:10d::2]:43370");
  EXPECT_EQ(v6.host, "fe80::b9b:ac5d:9cf0:b858");
  auto ompi = make_ompi_env(env_of(
      {{"OMPI_MCA_orte_hnp_uri", "4096.0;tcp6://[fe80::1]:1"}, {"OMPI_COMM_WORLD_RANK", "0"}}));
  EXPECT_EQ(ompi->coordinator_address(1s), "[fe80::1]:61441");
}

TEST(OmpiUri, MalformedUrisNameTheVariable) {
  for (const char* bad : {"", "nojob;tcp://1.2.3.4:5", "12.0;udp://1.2.3.4:5", "x.0;tcp://a:1",
                          "12.0;tcp://:5", "12.0;tcp6://[]:5"}) {
    try {
      parse_orte_uri(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find("OMPI_MCA_orte_hnp_uri"), std::string::npos);
    }
  }
}

TEST(MpichEnv, WithoutAPmiSocketTheMissingVariableIsNamed) {
  auto mpich =
      make_mpich_env(env_of({{"PMI_RANK", "1"}, {"PMI_SIZE", "2"}, {"MPI_LOCALRANKID", "1"}}));
  EXPECT_EQ(mpich->num_processes(), 2);
  EXPECT_EQ(mpich->local_process_id(), 1);
  try {
    mpich->coordinator_address(1s);
    FAIL();
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("PMI_FD"), std::string::npos);
  }
}

TEST(Pmi1, LinesParseIntoFields) {
  auto f = parse_pmi1_line("cmd=get_result rc=0 value=node1:61441 msg=success");
  EXPECT_EQ(f["cmd"], "get_result");
  EXPECT_EQ(f["value"], "node1:61441");
  EXPECT_THROW(parse_pmi1_line("cmd=x garbage"), Error);
}

}  // namespace
}  // namespace spmd
