#include "runtime/resolved_options.h"

#include <gtest/gtest.h>

#include <csignal>

#include "comm/device_comm_factory.h"
#include "kernels/backend.h"
#include "runtime/gpu_plugin.h"
#include "runtime/local_gpus.h"
#include "runtime/platform_choice.h"
#include "spmd/error.h"
#include "support/fake_env.h"

namespace spmd {
namespace {

using testing::env_of;

std::string error_of(const distributed::Options& o, const EnvReader& env) {
  try {
    resolve_options(o, env);
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  return "";
}

TEST(ResolveOptions, NothingGivenOrDetectedRaisesSayingWhatToPass) {
  const std::string message = error_of({}, env_of({}));
  EXPECT_NE(message.find("found no cluster"), std::string::npos) << message;
  EXPECT_NE(message.find("SPMD_NUM_PROCESSES=1"), std::string::npos) << message;
  EXPECT_NE(message.find("spmdrun"), std::string::npos) << message;
  // Reading no environment at all is no excuse either.
  EXPECT_NE(
      error_of({.cluster_detection_method = "deactivate"}, env_of({{"SPMD_NUM_PROCESSES", "4"}}))
          .find("found no cluster"),
      std::string::npos);
}

TEST(ResolveOptions, OneProcessRunsAloneWhenAskedTo) {
  auto r = resolve_options({.num_processes = 1}, env_of({}));
  EXPECT_TRUE(r.single_process);
  EXPECT_EQ(r.local_device_ids, std::vector<int>{0});
  EXPECT_TRUE(resolve_options({}, env_of({{"SPMD_NUM_PROCESSES", "1"}})).single_process);
}

TEST(ResolveOptions, ExplicitOptionsReadLikeTheSeed) {
  auto r = resolve_options(
      {.coordinator_address = "10.0.0.1:1234", .num_processes = 2, .process_id = 1}, env_of({}));
  EXPECT_FALSE(r.single_process);
  EXPECT_EQ(r.coordinator_address, "10.0.0.1:1234");
  EXPECT_EQ(r.num_processes, 2);
  EXPECT_EQ(r.process_id, 1);
  EXPECT_EQ(r.bind_address, "[::]:1234");
  EXPECT_EQ(r.initialization_timeout, std::chrono::seconds(300));
  EXPECT_EQ(r.heartbeat_timeout, std::chrono::seconds(100));
}

TEST(ResolveOptions, OptionsWinOverTheEnvironment) {
  auto env = env_of({{"SPMD_COORDINATOR_ADDRESS", "a:1"},
                     {"SPMD_NUM_PROCESSES", "4"},
                     {"SPMD_PROCESS_ID", "3"},
                     {"SPMD_CPU_DEVICES", "2"},
                     {"SPMD_HEARTBEAT_TIMEOUT", "2"},
                     {"SPMD_AUTH_TOKEN", "t"}});
  auto from_env = resolve_options({}, env);
  EXPECT_EQ(from_env.num_processes, 4);
  EXPECT_EQ(from_env.process_id, 3);
  EXPECT_EQ(from_env.num_cpu_devices, 2);
  EXPECT_EQ(from_env.local_device_ids, (std::vector<int>{0, 1}));
  EXPECT_EQ(from_env.heartbeat_timeout, std::chrono::seconds(2));
  EXPECT_EQ(from_env.auth_token, "t");
  auto mixed =
      resolve_options({.process_id = 1, .heartbeat_timeout = std::chrono::seconds(7)}, env);
  EXPECT_EQ(mixed.process_id, 1);
  EXPECT_EQ(mixed.num_processes, 4);
  EXPECT_EQ(mixed.heartbeat_timeout, std::chrono::seconds(7));
}

TEST(ResolveOptions, ThePreemptionSignalComesFromOptionsOrTheEnvironmentByNameOrNumber) {
  const distributed::Options cluster{
      .coordinator_address = "a:1", .num_processes = 2, .process_id = 0};
  EXPECT_EQ(resolve_options(cluster, env_of({})).preemption_signal, SIGTERM);
  EXPECT_EQ(
      resolve_options(cluster, env_of({{"SPMD_PREEMPTION_SIGNAL", "USR1"}})).preemption_signal,
      SIGUSR1);
  EXPECT_EQ(
      resolve_options(cluster, env_of({{"SPMD_PREEMPTION_SIGNAL", "SIGUSR2"}})).preemption_signal,
      SIGUSR2);
  EXPECT_EQ(resolve_options(cluster, env_of({{"SPMD_PREEMPTION_SIGNAL", "1"}})).preemption_signal,
            SIGHUP);
  distributed::Options given = cluster;
  given.preemption_signal = SIGINT;
  EXPECT_EQ(resolve_options(given, env_of({{"SPMD_PREEMPTION_SIGNAL", "USR1"}})).preemption_signal,
            SIGINT);
  for (const char* bad : {"KILL", "9", "STOP", "0", "term?"}) {
    EXPECT_NE(
        error_of(cluster, env_of({{"SPMD_PREEMPTION_SIGNAL", bad}})).find("SPMD_PREEMPTION_SIGNAL"),
        std::string::npos)
        << bad;
  }
  given.preemption_signal = SIGKILL;
  EXPECT_NE(error_of(given, env_of({})).find("preemption_signal = 9"), std::string::npos);
}

TEST(ResolveOptions, AMissingArgumentIsNamedWithWhereItCanComeFrom) {
  const std::string e = error_of({.num_processes = 2, .process_id = 0}, env_of({}));
  EXPECT_NE(e.find("coordinator_address"), std::string::npos) << e;
  EXPECT_NE(e.find("SPMD_COORDINATOR_ADDRESS"), std::string::npos) << e;
  EXPECT_EQ(e.find("num_processes ("), std::string::npos) << e;
}

TEST(ResolveOptions, ProcessIdOutsideTheRangeIsRejected) {
  const std::string e =
      error_of({.coordinator_address = "h:1", .num_processes = 2, .process_id = 2}, env_of({}));
  EXPECT_NE(e.find("process_id 2 is outside 0..1"), std::string::npos) << e;
  EXPECT_FALSE(
      error_of({.coordinator_address = "h:1", .num_processes = 2, .process_id = -1}, env_of({}))
          .empty());
}

TEST(ResolveOptions, LocalDeviceIdsRestrictTheVisibleDevices) {
  auto r = resolve_options(
      {.num_processes = 1, .local_device_ids = std::vector<int>{2, 0}, .num_cpu_devices = 4},
      env_of({}));
  EXPECT_EQ(r.local_device_ids, (std::vector<int>{0, 2}));
  EXPECT_NE(
      error_of({.num_processes = 1, .local_device_ids = std::vector<int>{4}, .num_cpu_devices = 4},
               env_of({}))
          .find("0..3"),
      std::string::npos);
  EXPECT_FALSE(
      error_of(
          {.num_processes = 1, .local_device_ids = std::vector<int>{1, 1}, .num_cpu_devices = 4},
          env_of({}))
          .empty());
}

// JAX's platform choice (platform_choice.h): the first requested platform this process has.
// Asked for GPUs, the runtime loads the GPU plugin (gpu_plugin.h): a build with CUDA has one,
// and the reason there are no GPUs here is the driver's; a build without has none, and says so.
// This machine has no GPU either way, so a list without cpu is refused, saying why.
std::string why_no_gpu_here() { return SPMD_TEST_CUDA_BUILT ? "sees no GPU" : "no GPU support"; }

TEST(ResolveOptions, ThePlatformIsTheFirstRequestedOneThisProcessHas) {
  const distributed::Options alone{.num_processes = 1};
  EXPECT_EQ(resolve_options(alone, env_of({})).platform, "cpu");
  EXPECT_EQ(resolve_options(alone, env_of({{"SPMD_PLATFORMS", "gpu, cpu"}})).platform, "cpu");
  EXPECT_EQ(resolve_options(alone, env_of({{"SPMD_PLATFORMS", "cpu"}})).platform, "cpu");
  const std::string no_gpu = error_of(alone, env_of({{"SPMD_PLATFORMS", "cuda"}}));
  EXPECT_NE(no_gpu.find(why_no_gpu_here()), std::string::npos) << no_gpu;
  EXPECT_NE(no_gpu.find("Add cpu"), std::string::npos) << no_gpu;
  // Options win over the environment, and deactivate reads none of it.
  distributed::Options gpu_only = alone;
  gpu_only.platforms = "gpu";
  EXPECT_NE(error_of(gpu_only, env_of({{"SPMD_PLATFORMS", "cpu"}})).find(why_no_gpu_here()),
            std::string::npos);
  EXPECT_EQ(resolve_options({.num_processes = 1, .cluster_detection_method = "deactivate"},
                            env_of({{"SPMD_PLATFORMS", "gpu"}}))
                .platform,
            "cpu");
  const std::string unknown = error_of(alone, env_of({{"SPMD_PLATFORMS", "cpu,tpu"}}));
  EXPECT_NE(unknown.find("unknown platform \"tpu\""), std::string::npos) << unknown;
  EXPECT_NE(error_of(alone, env_of({{"SPMD_PLATFORMS", ""}})).find("unknown platform"),
            std::string::npos);
}

// The plugin itself, loaded for real: in a CUDA build its backend becomes backend_for("gpu"),
// and a machine without a GPU says why (the driver's answer); without CUDA it says where it
// looked.
TEST(GpuPlugin, LoadsWhereBuiltAndSaysWhyThereIsNoGpu) {
  const GpuPlugin& plugin = load_gpu_plugin();
  EXPECT_EQ(plugin.loaded, bool(SPMD_TEST_CUDA_BUILT)) << plugin.why_not_loaded;
  if (plugin.loaded) {
    EXPECT_NE(plugin.path.find("libspmd_cuda.so"), std::string::npos) << plugin.path;
    EXPECT_EQ(kernels::backend_for("gpu").platform(), "gpu");
    EXPECT_EQ(&kernels::backend_of(MemorySpace::device(0)), &kernels::backend_for("gpu"));
    if (plugin.visible_gpus == 0) {
      EXPECT_FALSE(plugin.why_no_gpu.empty());
      EXPECT_THROW(gpu_device_name(0), FailedPrecondition);
    }
    // The device collectives came with it, as the GPU platform's device communicators.
    EXPECT_EQ(plugin.collectives.rfind(SPMD_TEST_NCCL_BUILT ? "NCCL " : "staged", 0), 0u)
        << plugin.collectives << plugin.why_no_collectives;
    const DeviceCommFactory* comms = device_comm_factory("gpu");
    ASSERT_NE(comms, nullptr) << plugin.why_no_collectives;
    EXPECT_EQ(comms->name(), plugin.collectives);
    EXPECT_FALSE(comms->supports(DType::kInt16));  // NCCL's dtypes: no 16-bit integers
    EXPECT_TRUE(comms->supports(DType::kBFloat16));
  } else {
    EXPECT_NE(plugin.why_not_loaded.find("libspmd_cuda.so"), std::string::npos);
    EXPECT_THROW(kernels::backend_for("gpu"), InvalidArgument);
  }
  EXPECT_EQ(&load_gpu_plugin(), &plugin);  // loaded once
}

TEST(ChoosePlatform, GpusWhenBuiltAndVisibleElseCpu) {
  EXPECT_EQ(choose_platform(std::nullopt, {.gpu_built = true, .visible_gpus = 2}), "gpu");
  EXPECT_EQ(choose_platform(std::nullopt, {.gpu_built = true, .visible_gpus = 0}), "cpu");
  EXPECT_EQ(choose_platform("cpu,gpu", {.gpu_built = true, .visible_gpus = 1}), "cpu");
  EXPECT_EQ(choose_platform("cuda,cpu", {.gpu_built = true, .visible_gpus = 1}), "gpu");
  EXPECT_TRUE(names_gpu("cpu, cuda"));
  EXPECT_TRUE(names_gpu("gpu"));
  EXPECT_FALSE(names_gpu("cpu"));
  EXPECT_FALSE(names_gpu(std::nullopt));
  // Without the plugin, the loader's reason is the refusal's.
  try {
    choose_platform("gpu", {.why_no_gpu = "libspmd_cuda.so: not found"});
    ADD_FAILURE() << "a GPU-only list without the plugin was accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("libspmd_cuda.so: not found"), std::string::npos);
  }
  try {
    choose_platform("gpu", {.gpu_built = true, .visible_gpus = 0});
    ADD_FAILURE() << "a GPU-only list without a visible GPU was accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("sees no GPU"), std::string::npos) << e.what();
  }
}

// JAX's rule: local_device_ids when given, one GPU per process (the local rank's) under a
// launcher, every visible GPU otherwise.
TEST(ChooseLocalGpus, OneGpuPerProcessUnderALauncherElseAllOrTheGivenIds) {
  EXPECT_EQ(choose_local_gpus({.local_rank = 2, .launcher = "slurm", .visible_gpus = 4}),
            std::vector<int>({2}));
  EXPECT_EQ(choose_local_gpus({.visible_gpus = 3}), std::vector<int>({0, 1, 2}));
  EXPECT_EQ(choose_local_gpus({.local_device_ids = std::vector<int>{3, 1},
                               .local_rank = 0,
                               .launcher = "ompi",
                               .visible_gpus = 4}),
            std::vector<int>({1, 3}));
}

TEST(ChooseLocalGpus, ALocalRankPastTheVisibleGpusNamesTheRemedy) {
  try {
    choose_local_gpus({.local_rank = 3, .launcher = "slurm", .visible_gpus = 1});
    ADD_FAILURE() << "local rank 3 was given a GPU among 1";
  } catch (const InvalidArgument& e) {
    const std::string why = e.what();
    EXPECT_NE(why.find("slurm started this process as local process 3"), std::string::npos) << why;
    EXPECT_NE(why.find("sees 1 GPU (ordinal 0)"), std::string::npos) << why;
    EXPECT_NE(why.find("SPMD_LOCAL_DEVICE_IDS=0"), std::string::npos) << why;
  }
}

TEST(ChooseLocalGpus, IdsThatAreNotDistinctVisibleOrdinalsAreRefused) {
  for (const std::vector<int>& ids : {std::vector<int>{}, {0, 0}, {-1}, {2}}) {
    try {
      choose_local_gpus({.local_device_ids = ids, .visible_gpus = 2});
      ADD_FAILURE() << "accepted " << ids.size() << " ids";
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find("sees 2 GPUs (ordinals 0..1)"), std::string::npos)
          << e.what();
    }
  }
}

TEST(ResolveOptions, BadValuesAreRejected) {
  EXPECT_FALSE(
      error_of({.coordinator_address = "nohost", .num_processes = 2, .process_id = 0}, env_of({}))
          .empty());
  EXPECT_FALSE(error_of({.heartbeat_timeout = std::chrono::milliseconds(0)}, env_of({})).empty());
  EXPECT_FALSE(error_of({}, env_of({{"SPMD_CPU_DEVICES", "0"}})).empty());
  EXPECT_FALSE(error_of({}, env_of({{"SPMD_PROCESS_ID", "x"}})).empty());
}

TEST(ResolveOptions, DeactivateIgnoresTheEnvironment) {
  auto r = resolve_options({.num_processes = 1, .cluster_detection_method = "deactivate"},
                           env_of({{"SPMD_NUM_PROCESSES", "4"}, {"SPMD_CPU_DEVICES", "3"}}));
  EXPECT_TRUE(r.single_process);
  EXPECT_EQ(r.num_cpu_devices, 1);
}

}  // namespace
}  // namespace spmd
