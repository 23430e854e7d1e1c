// Two processes sharing one GPU (run under spmdrun -n 2; label gpu): device-memory collectives
// through comm/gpu/staged_communicator.h, which NCCL would refuse. Each process checks
// all_reduce, all_gather, reduce_scatter and broadcast against the values every rank computes
// for itself, then a mismatched call: CollectiveMismatch in both, the communicator kFailed.
// Prints "[rank] ok …" when every check passed; "no GPU visible" (a skip) without a GPU.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "comm/gpu/staged_communicator.h"
#include "kernels/cuda/gpu_context.h"
#include "spmd/communicator.h"
#include "spmd/distributed.h"
#include "spmd/error.h"
#include "spmd/runtime.h"

using namespace spmd;
using kernels::cuda::DeviceBuffer;
using kernels::cuda::GpuContext;

namespace {

int failures = 0;

void expect(bool ok, const std::string& what) {
  if (!ok) {
    std::printf("FAILED: %s\n", what.c_str());
    ++failures;
  }
}

std::vector<float> on_host(GpuContext& gpu, const DeviceBuffer& b, size_t n) {
  std::vector<float> v(n);
  b.copy_to_host(v.data(), n * 4);
  gpu.synchronize();
  return v;
}

DeviceBuffer on_gpu(GpuContext& gpu, const std::vector<float>& v) {
  DeviceBuffer b(gpu, v.size() * 4);
  b.copy_from_host(v.data(), v.size() * 4);
  return b;
}

}  // namespace

int main() {
  std::string why;
  if (kernels::cuda::visible_gpus(&why) == 0) {
    std::printf("no GPU visible: %s\n", why.c_str());
    return 0;
  }
  // Both processes take GPU 0, whatever the host has (one process per GPU would refuse the
  // second where there is one).
  distributed::initialize({.local_device_ids = std::vector<int>{0}});
  const int rank = process_index(), size = process_count();
  GpuContext& gpu = GpuContext::get(0);
  auto comm = make_staged_communicator(world(), gpu.ordinal());
  void* stream = gpu.stream();
  const size_t n = 1000;
  std::vector<float> mine(n * static_cast<size_t>(size));
  for (size_t i = 0; i < mine.size(); ++i) mine[i] = static_cast<float>(rank * 1000 + i);
  const DeviceBuffer in = on_gpu(gpu, mine);

  DeviceBuffer sum(gpu, n * 4);
  comm->all_reduce(in.data(), sum.data(), n, DType::kFloat32, ReduceOp::kSum, stream);
  const std::vector<float> s = on_host(gpu, sum, n);
  for (size_t i = 0; i < n; ++i) {
    float want = 0;
    for (int r = 0; r < size; ++r) want += static_cast<float>(r * 1000 + i);
    if (s[i] != want) {
      expect(false, "all_reduce element " + std::to_string(i));
      break;
    }
  }

  DeviceBuffer gathered(gpu, n * 4 * static_cast<size_t>(size));
  comm->all_gather(in.data(), gathered.data(), n, DType::kFloat32, stream);
  const std::vector<float> g = on_host(gpu, gathered, n * static_cast<size_t>(size));
  for (int r = 0; r < size; ++r) {
    expect(g[static_cast<size_t>(r) * n + 7] == static_cast<float>(r * 1000 + 7), "all_gather");
  }

  DeviceBuffer scattered(gpu, n * 4);
  comm->reduce_scatter(in.data(), scattered.data(), n, DType::kFloat32, ReduceOp::kMax, stream);
  const std::vector<float> rs = on_host(gpu, scattered, n);
  expect(rs[3] == static_cast<float>((size - 1) * 1000 + rank * n + 3), "reduce_scatter");

  DeviceBuffer broadcast(gpu, n * 4);
  comm->broadcast(in.data(), broadcast.data(), n, DType::kFloat32, 1, stream);
  expect(on_host(gpu, broadcast, n)[5] == 1005.0f, "broadcast from rank 1");
  expect(comm->poll().state == DeviceCommState::kReady, "ready after four collectives");

  try {
    comm->all_reduce(in.data(), sum.data(), rank == 1 ? n / 2 : n, DType::kFloat32, ReduceOp::kSum,
                     stream);
    expect(false, "a mismatched all_reduce went unnoticed");
  } catch (const CollectiveMismatch& e) {
    expect(std::string(e.what()).find(rank == 1 ? "process 0" : "process 1") != std::string::npos,
           std::string("mismatch: ") + e.what());
  }
  expect(comm->poll().state == DeviceCommState::kFailed, "failed after the mismatch");
  comm.reset();
  if (failures == 0) std::printf("ok two processes shared GPU 0 (%s)\n", gpu.name().c_str());
  distributed::shutdown();
  return failures == 0 ? 0 : 1;
}
