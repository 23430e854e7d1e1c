// How a host's cores are divided among CPU devices (runtime/cpu_threads.h), and where the
// setting comes from (runtime/resolved_options.h).
#include "runtime/cpu_threads.h"

#include <gtest/gtest.h>

#include "runtime/resolved_options.h"
#include "spmd/error.h"
#include "support/fake_env.h"

namespace spmd {
namespace {

using testing::env_of;

TEST(CpuThreads, TheCoresAreDividedAmongTheHostsDevicesUnlessACountIsGiven) {
  EXPECT_EQ(threads_per_cpu_device(0, 16, 1, 1), 16);  // one device owns the host
  EXPECT_EQ(threads_per_cpu_device(0, 16, 2, 1), 8);
  EXPECT_EQ(threads_per_cpu_device(0, 16, 2, 2), 4);  // two processes of two devices
  EXPECT_EQ(threads_per_cpu_device(0, 2, 8, 1), 1);   // more devices than cores: one each
  EXPECT_EQ(threads_per_cpu_device(0, 7, 2, 1), 3);   // a remainder stays idle
  EXPECT_EQ(threads_per_cpu_device(5, 2, 8, 4), 5);   // asked for: taken as given
  EXPECT_GE(available_cores(), 1);
}

TEST(CpuThreads, ACgroupQuotaCountsAsWholeCores) {
  EXPECT_EQ(cgroup_quota_cores("max 100000\n"), std::nullopt);
  EXPECT_EQ(cgroup_quota_cores("200000 100000\n"), 2);
  EXPECT_EQ(cgroup_quota_cores("150000 100000"), 2);  // 1.5 cores: rounded up
  EXPECT_EQ(cgroup_quota_cores("50000 100000\n"), 1);
  EXPECT_EQ(cgroup_quota_cores(""), std::nullopt);
  EXPECT_EQ(cgroup_quota_cores("garbage"), std::nullopt);
  EXPECT_EQ(cgroup_quota_cores("-1 100000"), std::nullopt);
}

TEST(CpuThreads, TheCountComesFromOptionsOrTheEnvironmentAndIsChecked) {
  EXPECT_EQ(resolve_options({.num_processes = 1}, env_of({})).cpu_threads_per_device, 0);
  EXPECT_EQ(resolve_options({.num_processes = 1}, env_of({{"SPMD_CPU_THREADS_PER_DEVICE", "3"}}))
                .cpu_threads_per_device,
            3);
  EXPECT_EQ(resolve_options({.num_processes = 1, .cpu_threads_per_device = 2},
                            env_of({{"SPMD_CPU_THREADS_PER_DEVICE", "3"}}))
                .cpu_threads_per_device,
            2);
  EXPECT_THROW(resolve_options({.num_processes = 1, .cpu_threads_per_device = 0}, env_of({})),
               InvalidArgument);
  EXPECT_THROW(
      resolve_options({.num_processes = 1}, env_of({{"SPMD_CPU_THREADS_PER_DEVICE", "lots"}})),
      InvalidArgument);
  EXPECT_THROW(requested_cpu_threads(env_of({{"SPMD_CPU_THREADS_PER_DEVICE", "0"}})),
               InvalidArgument);
}

}  // namespace
}  // namespace spmd
