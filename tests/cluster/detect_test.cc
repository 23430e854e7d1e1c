#include <gtest/gtest.h>

#include "cluster/cluster_env.h"
#include "spmd/error.h"
#include "support/fake_env.h"

namespace spmd {
namespace {

using testing::env_of;

TEST(Detect, NothingSetDetectsNothing) {
  EXPECT_EQ(detect_cluster_env(std::nullopt, env_of({})), nullptr);
}

TEST(Detect, SpmdVariablesAreDetectedAndRead) {
  auto env = detect_cluster_env(std::nullopt, env_of({{"SPMD_COORDINATOR_ADDRESS", "h:1"},
                                                      {"SPMD_NUM_PROCESSES", "4"},
                                                      {"SPMD_PROCESS_ID", "3"},
                                                      {"SPMD_LOCAL_DEVICE_IDS", "0,2"}}));
  ASSERT_NE(env, nullptr);
  EXPECT_EQ(env->name(), "env");
  EXPECT_EQ(env->coordinator_address(std::chrono::seconds(1)), "h:1");
  EXPECT_EQ(env->num_processes(), 4);
  EXPECT_EQ(env->process_id(), 3);
  EXPECT_EQ(env->local_device_ids(), (std::vector<int>{0, 2}));
}

TEST(Detect, AnIndexedKubernetesPodIsDetectedAfterTheLaunchers) {
  const auto env = detect_cluster_env(std::nullopt, env_of({{"JOB_COMPLETION_INDEX", "3"},
                                                            {"KUBERNETES_SERVICE_HOST", "10.0.0.1"},
                                                            {"HOSTNAME", "train-3"}}));
  ASSERT_NE(env, nullptr);
  EXPECT_EQ(env->name(), "k8s");
  EXPECT_EQ(env->process_id(), 3);
  EXPECT_EQ(env->local_process_id(), 0);
  // Outside a Job's pod, or with spmdrun's variables set, it is not what is read.
  EXPECT_EQ(detect_cluster_env(std::nullopt, env_of({{"KUBERNETES_SERVICE_HOST", "10.0.0.1"}})),
            nullptr);
  EXPECT_EQ(detect_cluster_env(std::nullopt, env_of({{"JOB_COMPLETION_INDEX", "3"},
                                                     {"KUBERNETES_SERVICE_HOST", "10.0.0.1"},
                                                     {"SPMD_COORDINATOR_ADDRESS", "h:1"},
                                                     {"SPMD_NUM_PROCESSES", "4"},
                                                     {"SPMD_PROCESS_ID", "3"}}))
                ->name(),
            "env");
}

TEST(Detect, DeactivateReadsNothing) {
  EXPECT_EQ(detect_cluster_env("deactivate", env_of({{"SPMD_NUM_PROCESSES", "2"}})), nullptr);
}

TEST(Detect, NamingAnAbsentEnvironmentSaysWhichVariablesWereMissing) {
  try {
    detect_cluster_env("env", env_of({}));
    FAIL();
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("SPMD_COORDINATOR_ADDRESS"), std::string::npos);
  }
}

TEST(Detect, UnknownMethodListsTheSupportedOnes) {
  try {
    detect_cluster_env("kubernetes", env_of({}));
    FAIL();
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("'kubernetes'"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("env"), std::string::npos);
  }
}

TEST(EnvReader, MalformedValuesNameTheVariableAndValue) {
  auto env = env_of({{"N", "4x"}, {"L", "0,,1"}, {"T", "-2"}, {"B", "maybe"}});
  try {
    env.get_int("N", 1, 10);
    FAIL();
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("N='4x'"), std::string::npos);
  }
  EXPECT_THROW(env.get_int_list("L", 0, 10), InvalidArgument);
  EXPECT_THROW(env.get_seconds("T"), InvalidArgument);
  EXPECT_THROW(env.get_bool("B"), InvalidArgument);
  EXPECT_EQ(env_of({{"T", "0.5"}}).get_seconds("T"), std::chrono::milliseconds(500));
  EXPECT_FALSE(env.get_int("absent", 0, 1).has_value());
}

}  // namespace
}  // namespace spmd
