#include "runtime/topology_view.h"

#include <gtest/gtest.h>

#include "spmd/error.h"

namespace spmd {
namespace {

// Two hosts; process 0 and 2 on host a, process 1 on host b; two devices each.
wire::Topology three_processes() {
  wire::Topology t;
  auto* a = t.add_hosts();
  a->set_host_id("a/boot");
  a->set_hostname("a");
  auto* b = t.add_hosts();
  b->set_host_id("b/boot");
  b->set_hostname("b");
  t.add_platforms("cpu");
  for (int p = 0; p < 3; ++p) {
    t.add_host_index(p == 1 ? 1 : 0);
    t.add_pid(100 + p);
    t.add_device_count(2);
    for (int d = 0; d < 2; ++d) {
      t.add_local_hardware_id(d);
      t.add_platform_index(0);
    }
  }
  return t;
}

TEST(TopologyView, GlobalIdsAreDenseByProcessThenLocalId) {
  auto view = view_from_topology(three_processes(), 1, 3);
  ASSERT_EQ(view->devices.size(), 6u);
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(view->devices[i].id(), i);
    EXPECT_EQ(view->devices[i].process_index(), i / 2);
    EXPECT_EQ(view->devices[i].local_hardware_id(), i % 2);
  }
  ASSERT_EQ(view->local_devices.size(), 2u);
  EXPECT_EQ(view->local_devices[0].id(), 2);
  EXPECT_EQ(view->local_devices[0].host_id(), "b/boot");
  EXPECT_EQ(view->devices[4].host_id(), "a/boot");
  EXPECT_EQ(view->process_index, 1);
  EXPECT_EQ(view->process_count, 3);
  EXPECT_EQ(view->devices[3].to_string(), "CpuDevice(id=3, process_index=1, local_hardware_id=1)");
}

TEST(TopologyView, InconsistentTopologiesAreRejected) {
  EXPECT_THROW(view_from_topology(three_processes(), 0, 4), Error);
  auto bad_host = three_processes();
  bad_host.set_host_index(2, 5);
  EXPECT_THROW(view_from_topology(bad_host, 0, 3), Error);
  auto bad_count = three_processes();
  bad_count.set_device_count(0, 1000);
  EXPECT_THROW(view_from_topology(bad_count, 0, 3), Error);
  auto negative = three_processes();
  negative.set_device_count(1, -1);
  EXPECT_THROW(view_from_topology(negative, 0, 3), Error);
  auto bad_platform = three_processes();
  bad_platform.set_platform_index(3, 9);
  EXPECT_THROW(view_from_topology(bad_platform, 0, 3), Error);
  auto leftover = three_processes();
  leftover.add_local_hardware_id(7);
  leftover.add_platform_index(0);
  EXPECT_THROW(view_from_topology(leftover, 0, 3), Error);
  auto short_kinds = three_processes();
  short_kinds.add_device_kinds("NVIDIA H100 80GB HBM3");
  short_kinds.add_device_kind_index(0);
  EXPECT_THROW(view_from_topology(short_kinds, 0, 3), Error);
  auto bad_kind = three_processes();
  bad_kind.add_device_kinds("x");
  for (int d = 0; d < 6; ++d) bad_kind.add_device_kind_index(d == 4 ? 1 : 0);
  EXPECT_THROW(view_from_topology(bad_kind, 0, 3), Error);
}

// JAX's Device.device_kind: "cpu" on a CPU device (a topology without the column), and each
// device's own where the column is there (a GPU's CUDA name).
TEST(TopologyView, EachDeviceSaysItsKind) {
  EXPECT_EQ(view_from_topology(three_processes(), 0, 3)->devices[5].device_kind(), "cpu");
  auto gpus = three_processes();
  gpus.set_platforms(0, "gpu");
  gpus.add_device_kinds("NVIDIA H100 80GB HBM3");
  gpus.add_device_kinds("NVIDIA A100-SXM4-40GB");
  for (int d = 0; d < 6; ++d) gpus.add_device_kind_index(d < 2 ? 1 : 0);
  const auto view = view_from_topology(gpus, 0, 3);
  EXPECT_EQ(view->devices[1].device_kind(), "NVIDIA A100-SXM4-40GB");
  EXPECT_EQ(view->devices[2].device_kind(), "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(view->devices[2].platform(), "gpu");
  EXPECT_EQ(view->devices[2].to_string(), "CudaDevice(id=2, process_index=1, local_hardware_id=0)");
}

}  // namespace
}  // namespace spmd
