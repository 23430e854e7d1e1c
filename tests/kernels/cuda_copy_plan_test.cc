// The CUDA backend's copy rules (src/kernels/cuda/copy_plan.h), on the CPU: which stream carries
// each copy, what is drained first, and when the host waits.
#include <gtest/gtest.h>

#include "kernels/cuda/copy_plan.h"
#include "spmd/error.h"

namespace spmd::kernels::cuda {
namespace {

using Kind = CopyPlan::Kind;

TEST(CopyPlan, AHostDestinationWaitsOnTheSourcesStreamAndNothingElseDoes) {
  const CopyPlan up = plan_copy(MemorySpace::host(), MemorySpace::device(1));
  EXPECT_EQ(up.kind, Kind::kHostToDevice);
  EXPECT_EQ(up.stream_gpu, 1);
  EXPECT_EQ(up.drain_gpu, -1);
  EXPECT_FALSE(up.host_waits);

  const CopyPlan down = plan_copy(MemorySpace::device(2), MemorySpace::host());
  EXPECT_EQ(down.kind, Kind::kDeviceToHost);
  EXPECT_EQ(down.stream_gpu, 2);  // behind the kernels that wrote the source
  EXPECT_TRUE(down.host_waits);

  const CopyPlan here = plan_copy(MemorySpace::device(0), MemorySpace::device(0));
  EXPECT_EQ(here.kind, Kind::kOnDevice);
  EXPECT_EQ(here.stream_gpu, 0);
  EXPECT_FALSE(here.host_waits);

  const CopyPlan host = plan_copy(MemorySpace::host(), MemorySpace::host());
  EXPECT_EQ(host.kind, Kind::kHostToHost);
  EXPECT_EQ(host.stream_gpu, -1);
}

TEST(CopyPlan, BetweenTwoGpusTheSourceIsDrainedAndTheDestinationCarriesIt) {
  const CopyPlan peer = plan_copy(MemorySpace::device(0), MemorySpace::device(3));
  EXPECT_EQ(peer.kind, Kind::kPeer);
  EXPECT_EQ(peer.drain_gpu, 0);
  EXPECT_EQ(peer.stream_gpu, 3);
  EXPECT_FALSE(peer.host_waits);
  EXPECT_THROW(plan_copy(MemorySpace{MemorySpace::Kind::kDevice, -1}, MemorySpace::host()),
               InvalidArgument);
}

}  // namespace
}  // namespace spmd::kernels::cuda
