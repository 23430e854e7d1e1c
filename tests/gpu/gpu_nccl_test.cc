// NCCL behind the device-collectives seam on a GPU (label gpu): a one-rank communicator for
// every collective and dtype family, its state through poll(), abort, and a communicator whose
// second rank never arrives, which stays kInProgress and ends at once when aborted (the hang
// JAX has no way out of). One GPU allows one rank per communicator (NCCL refuses two on one
// GPU), so more ranks are tested where more GPUs are lent.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>
#include <vector>

#include "comm/device_watchdog.h"
#include "comm/gpu/nccl_communicator.h"
#include "gpu/gpu_fixture.h"
#include "spmd/error.h"

namespace spmd::test {
namespace {

using GpuNccl = Gpu;

// Polls until the communicator leaves kInProgress or `seconds` pass.
DeviceCommStatus settle(DeviceCommunicator& comm, double seconds) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  DeviceCommStatus status = comm.poll();
  while (status.state == DeviceCommState::kInProgress && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    status = comm.poll();
  }
  return status;
}

TEST_F(GpuNccl, AOneRankCommunicatorRunsEveryCollective) {
  const auto comm = make_nccl_communicator(make_nccl_id(), 0, 1, gpu().ordinal());
  ASSERT_EQ(settle(*comm, 30).state, DeviceCommState::kReady) << comm->poll().error;
  EXPECT_EQ(comm->rank(), 0);
  EXPECT_EQ(comm->size(), 1);
  void* stream = gpu().stream();
  for (DType t :
       {DType::kFloat32, DType::kBFloat16, DType::kInt32, DType::kFloat64, DType::kUInt8}) {
    const ChainValue x = chain_value(t, {1, -2, 3, 4, 5, 6, 7, 8});
    const DeviceBuffer in = upload(x.bytes);
    for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kProd, ReduceOp::kMin, ReduceOp::kMax}) {
      DeviceBuffer out = upload(Bytes(x.bytes.size(), std::byte{0xEE}));
      comm->all_reduce(in.data(), out.data(), 8, t, op, stream);
      EXPECT_EQ(download(out, x.bytes.size()), x.bytes)
          << dtype_name(t) << " " << reduce_op_name(op);
    }
    DeviceBuffer gathered = upload(Bytes(x.bytes.size(), std::byte{0xEE}));
    comm->all_gather(in.data(), gathered.data(), 8, t, stream);
    EXPECT_EQ(download(gathered, x.bytes.size()), x.bytes) << "all_gather " << dtype_name(t);
    DeviceBuffer scattered = upload(Bytes(x.bytes.size(), std::byte{0xEE}));
    comm->reduce_scatter(in.data(), scattered.data(), 8, t, ReduceOp::kSum, stream);
    EXPECT_EQ(download(scattered, x.bytes.size()), x.bytes) << "reduce_scatter " << dtype_name(t);
    DeviceBuffer broadcast = upload(Bytes(x.bytes.size(), std::byte{0xEE}));
    comm->broadcast(in.data(), broadcast.data(), 8, t, 0, stream);
    EXPECT_EQ(download(broadcast, x.bytes.size()), x.bytes) << "broadcast " << dtype_name(t);
  }
  EXPECT_EQ(comm->poll().state, DeviceCommState::kReady);
  EXPECT_THROW(comm->all_reduce(nullptr, nullptr, 1, DType::kInt16, ReduceOp::kSum, stream),
               InvalidArgument);
}

TEST_F(GpuNccl, AnAbortedCommunicatorRefusesMoreWork) {
  const auto comm = make_nccl_communicator(make_nccl_id(), 0, 1, gpu().ordinal());
  ASSERT_EQ(settle(*comm, 30).state, DeviceCommState::kReady) << comm->poll().error;
  comm->abort();
  comm->abort();  // idempotent
  EXPECT_EQ(comm->poll().state, DeviceCommState::kFailed);
  try {
    comm->all_reduce(nullptr, nullptr, 1, DType::kFloat32, ReduceOp::kSum, gpu().stream());
    FAIL() << "a collective ran after abort";
  } catch (const FailedPrecondition& e) {
    EXPECT_NE(std::string(e.what()).find("after its NCCL communicator was aborted"),
              std::string::npos)
        << e.what();
  }
}

// Rank 1 of 2 never comes: the communicator stays in progress, never ready, and abort() ends it
// at once instead of the wait that would never end.
TEST_F(GpuNccl, APeerThatNeverArrivesIsAbortedAtOnce) {
  const auto comm = make_nccl_communicator(make_nccl_id(), 0, 2, gpu().ordinal());
  EXPECT_EQ(settle(*comm, 2).state, DeviceCommState::kInProgress) << comm->poll().error;
  const auto start = std::chrono::steady_clock::now();
  comm->abort();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 5.0);
  EXPECT_EQ(comm->poll().state, DeviceCommState::kFailed);
}

// The same, guarded by the watchdog on its own thread with a 1 s deadline, as a job would run it:
// the creation nobody completes becomes DeadlineExceeded within 5 s past the deadline, and
// NCCL's communicator is aborted for it, never a hang.
TEST_F(GpuNccl, TheWatchdogTurnsAPeerThatNeverArrivesIntoADeadline) {
  auto comm = make_nccl_communicator(make_nccl_id(), 0, 2, gpu().ordinal());
  DeviceCommunicator* nccl = comm.get();
  DeviceWatchdog watchdog(std::move(comm), std::chrono::seconds(1), "process 0 (this test)",
                          [](uint64_t) { return std::vector<int>{1}; });
  const auto start = DeviceWatchdog::Clock::now();
  watchdog.queued(
      0, "creation of a 2-rank NCCL communicator",
      [nccl] { return nccl->poll().state != DeviceCommState::kInProgress; }, start);
  watchdog.start(std::chrono::milliseconds(10));
  while (!watchdog.tripped() && DeviceWatchdog::Clock::now() - start < std::chrono::seconds(30)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  const double waited = std::chrono::duration<double>(DeviceWatchdog::Clock::now() - start).count();
  ASSERT_TRUE(watchdog.tripped());
  EXPECT_LT(waited, 6.0);
  EXPECT_EQ(nccl->poll().state, DeviceCommState::kFailed);
  try {
    watchdog.rethrow();
  } catch (const DeadlineExceeded& e) {
    EXPECT_NE(std::string(e.what()).find("rank(s) 1 never arrived"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace spmd::test
