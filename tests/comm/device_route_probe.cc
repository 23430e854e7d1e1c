// The runtime's device collectives across the processes of a job (run under spmdrun, 3
// processes of one CPU device each): with the simulated device backend, jit's blocks live in
// "device" memory, and with the key-value test communicators (support/kv_device_comm.h)
// registered as the platform's device communicators, jit's psum, pmax, all_gather and
// psum_scatter go through the device route (compute/device_route.h) instead of staging through
// the host engine. Modes:
// - values: every result equals the host engine's, bit for bit; every op went the device way;
//   nothing reached the simulated device that a GPU would fault on;
// - stall: process 2 stops taking part for longer than the collective deadline while staying
//   alive; the others' psum is DeadlineExceeded within 5 s past the deadline, naming the
//   collective and their process (never a hang);
// - group: a DeviceGroup over the world communicator: an all_reduce's value and generation,
//   then, on a new group, a first call that differs on process 1 is CollectiveMismatch on every
//   process, naming both calls;
// - gpu (label gpu; SPMD_PLATFORMS=gpu): the programs on GPUs through the GPU platform's device
//   communicators, against the values computed by hand; "no GPU visible" (a skip) without one.
// Prints "[rank] ok <mode>" and exits 0 only when every check passed on this process.
#include <spmd/spmd.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "comm/device_group.h"
#include "kernels/backend.h"
#include "runtime/gpu_plugin.h"
#include "support/kv_device_comm.h"
#include "support/simulated_device_backend.h"

namespace jnp = spmd::numpy;
using spmd::Array;
using spmd::DType;
using spmd::HostArray;
using spmd::NamedSharding;
using spmd::None;
using spmd::P;
using spmd::Tensor;
using spmd::testing::KvDeviceCommFactory;
using spmd::testing::SimulatedDeviceBackend;
using Clock = std::chrono::steady_clock;

namespace {

int failures = 0;

void expect(bool ok, const std::string& what) {
  if (!ok) {
    std::printf("FAILED on process %d: %s\n", spmd::process_index(), what.c_str());
    std::fflush(stdout);
    ++failures;
  }
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// Small integers as float32, so every order of summation gives the same bits.
HostArray counting(int64_t rows, int64_t cols, int phase) {
  std::vector<float> v(static_cast<size_t>(rows * cols));
  for (size_t k = 0; k < v.size(); ++k) v[k] = static_cast<float>((k * 7 + phase) % 11) - 5;
  return HostArray::from_vector(v, {rows, cols});
}

using Unary = std::function<Tensor(const Tensor&)>;
using Binary = std::function<Tensor(const Tensor&, const Tensor&)>;

struct Programs {
  spmd::Mesh mesh;
  spmd::Jitted<Unary> sum, max, gathered;
  spmd::Jitted<Binary> scattered;
  Array rows, cols, w_rows;

  Programs()
      : mesh(spmd::devices(), {spmd::process_count()}, {"x"}),
        sum(Unary([](const Tensor& x) { return jnp::sum(x, {0}); }), {.name = "sum0"}),
        max(Unary([](const Tensor& x) { return jnp::max(x, {0}); }), {.name = "max0"}),
        gathered(Unary([](const Tensor& x) { return x * 2.0f; }),
                 {.out_shardings = {NamedSharding(mesh, P())}, .name = "gathered"}),
        scattered(Binary([](const Tensor& x, const Tensor& w) { return jnp::matmul(x, w); }),
                  {.out_shardings = {NamedSharding(mesh, P("x"))}, .name = "scattered"}),
        rows(spmd::device_put(counting(n(), 4, 0), NamedSharding(mesh, P("x")))),
        cols(spmd::device_put(counting(n(), n(), 1), NamedSharding(mesh, P(None, "x")))),
        w_rows(spmd::device_put(counting(n(), n(), 2), NamedSharding(mesh, P("x")))) {}

  static int64_t n() { return int64_t{2} * spmd::process_count(); }

  std::vector<HostArray> run() {
    using spmd::multihost::process_allgather;
    return {process_allgather(sum(rows)), process_allgather(max(rows)),
            process_allgather(gathered(rows)), process_allgather(scattered(cols, w_rows))};
  }
};

bool same_bytes(const HostArray& a, const HostArray& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() &&
         std::memcmp(a.bytes().data(), b.bytes().data(), a.nbytes()) == 0;
}

void values() {
  SimulatedDeviceBackend device;  // first: the programs keep constants in its memory
  KvDeviceCommFactory factory(device);
  Programs p;
  const std::vector<HostArray> want = p.run();  // the host engine's
  std::vector<HostArray> got;
  {
    const spmd::kernels::BackendOverride backend(device);
    const spmd::DeviceCommFactoryOverride comms("cpu", factory);
    got = p.run();
  }
  const char* names[] = {"sum", "max", "all_gather", "psum_scatter"};
  for (size_t k = 0; k < want.size(); ++k) {
    expect(same_bytes(got[k], want[k]), std::string(names[k]) + " differs from the host engine's");
  }
  const auto log = factory.log();
  for (const char* op : {"all_reduce", "all_gather", "reduce_scatter"}) {
    expect(log->ops.count(op) == 1, std::string(op) + " did not go through the device route");
  }
  expect(log->made == 1,
         "one device communicator for the one group, made " + std::to_string(log->made));
  expect(device.violations().empty(), "the simulated device saw what a GPU would fault on");
}

void stall() {
  SimulatedDeviceBackend device;  // first: the programs keep constants in its memory
  KvDeviceCommFactory factory(device);
  Programs p;
  const spmd::kernels::BackendOverride backend(device);
  const spmd::DeviceCommFactoryOverride comms("cpu", factory);
  const HostArray first = spmd::multihost::process_allgather(p.sum(p.rows));
  expect(factory.log()->completed >= 1, "the first psum went through the device route");
  const auto deadline = std::chrono::seconds(2);  // SPMD_COLLECTIVE_TIMEOUT, set by the test
  if (spmd::process_index() == spmd::process_count() - 1) {
    std::this_thread::sleep_for(deadline * 2);  // alive, heartbeating, not taking part
    return;
  }
  const auto t0 = Clock::now();
  try {
    (void)p.sum(p.rows);
    expect(false, "a psum missing a process returned");
  } catch (const spmd::DeadlineExceeded& e) {
    const auto waited = Clock::now() - t0;
    const std::string m = e.what();
    expect(waited >= deadline, "the error came before the deadline: " + m);
    expect(waited < deadline + std::chrono::seconds(5), "the error came 5 s past the deadline");
    expect(has(m, "all_reduce #1"), "the error names the collective: " + m);
    expect(has(m, "process " + std::to_string(spmd::process_index()) + " on host"),
           "the error names this process: " + m);
    expect(has(m, "did not finish within"), "the error says it did not finish: " + m);
    const std::string last = std::to_string(spmd::process_count() - 1);
    expect(has(m, " Now: ") && has(m, "process " + last + " (host"),
           "the error says what the missing process does: " + m);
    std::printf("[%d] the error: %s\n", spmd::process_index(), m.c_str());
  } catch (const std::exception& e) {
    expect(false, std::string("the wrong error: ") + e.what());
  }
  (void)first;
}

void group() {
  SimulatedDeviceBackend device;
  KvDeviceCommFactory factory(device);
  const spmd::kernels::BackendOverride backend(device);
  const spmd::MemorySpace memory = spmd::MemorySpace::device(0);
  const auto make = [&](const spmd::Communicator& host) {
    spmd::DeviceGroupConfig config;
    config.deadline = std::chrono::seconds(20);
    config.who = "process " + std::to_string(spmd::process_index());
    config.client = &spmd::distributed::client();
    for (int q = 0; q < spmd::process_count(); ++q) config.processes.push_back(q);
    spmd::DeviceQueue queue{device.stream(memory), [&] { return device.fence(memory); }};
    return std::make_unique<spmd::DeviceGroup>(host, memory, factory, std::move(queue),
                                               std::move(config));
  };
  const spmd::Communicator world = spmd::world();
  auto g = make(world);
  const float mine = static_cast<float>(spmd::process_index() + 1);
  spmd::Block x = spmd::Block::from_vector(std::vector<float>(4, mine), {4}).to_memory(memory);
  spmd::Block out = spmd::Block::allocate(DType::kFloat32, {4}, memory);
  g->all_reduce(x.bytes().data(), out.mutable_bytes().data(), 4, DType::kFloat32,
                spmd::ReduceOp::kSum);
  const int n = spmd::process_count();
  const int total = n * (n + 1) / 2;  // 1 + 2 + … + n
  expect(out.to_host().data<float>()[3] == static_cast<float>(total), "the all_reduce's sum");
  expect(g->generation() == 0 && g->completed() == 1, "generation 0, one call completed");
  // A new group whose first call differs on process 1: CollectiveMismatch everywhere.
  auto h = make(world.split(0, world.rank()));
  const size_t count = spmd::process_index() == 1 ? 3 : 4;
  try {
    h->all_reduce(x.bytes().data(), out.mutable_bytes().data(), count, DType::kFloat32,
                  spmd::ReduceOp::kSum);
    expect(false, "a first call that differs returned");
  } catch (const spmd::CollectiveMismatch& e) {
    const std::string m = e.what();
    expect(has(m, "float32 x 3") && has(m, "float32 x 4"), "the error names both calls: " + m);
  } catch (const std::exception& e) {
    expect(false, std::string("the wrong error: ") + e.what());
  }
  expect(device.violations().empty(), "the simulated device saw what a GPU would fault on");
}

// The programs' values computed here, element by element (small integers: exact in float32).
std::vector<HostArray> by_hand() {
  const int64_t n = Programs::n();
  const HostArray r_array = counting(n, 4, 0);
  const std::span<const float> r = r_array.data<float>();
  const HostArray c_array = counting(n, n, 1);
  const std::span<const float> c = c_array.data<float>();
  const HostArray w_array = counting(n, n, 2);
  const std::span<const float> w = w_array.data<float>();
  std::vector<float> sum(4, 0.0f), max(4, -INFINITY), twice(r.size()), product(c.size(), 0.0f);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < 4; ++j) {
      sum[j] += r[i * 4 + j];
      max[j] = std::max(max[j], r[i * 4 + j]);
    }
  }
  for (size_t k = 0; k < r.size(); ++k) twice[k] = r[k] * 2.0f;
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      for (int64_t k = 0; k < n; ++k) product[i * n + j] += c[i * n + k] * w[k * n + j];
    }
  }
  return {HostArray::from_vector(sum, {4}), HostArray::from_vector(max, {4}),
          HostArray::from_vector(twice, {n, 4}), HostArray::from_vector(product, {n, n})};
}

// On GPUs (SPMD_PLATFORMS=gpu, label gpu): the same programs through the GPU platform's device
// communicators (NCCL, or staging where the processes share one GPU), against the values by
// hand. False, having printed why, where no GPU is visible.
bool on_gpus() {
  const spmd::GpuPlugin& plugin = spmd::load_gpu_plugin();
  if (plugin.visible_gpus == 0) {
    std::printf("no GPU visible: %s%s\n", plugin.why_not_loaded.c_str(), plugin.why_no_gpu.c_str());
    return false;
  }
  // One GPU for the two processes: both take it (staging), as JAX's one-process-per-GPU rule
  // would refuse; with two or more, each takes its own (NCCL).
  spmd::distributed::Options options;
  if (plugin.visible_gpus == 1) options.local_device_ids = std::vector<int>{0};
  spmd::distributed::initialize(options);
  expect(spmd::devices().front().platform() == "gpu", "the devices are GPUs");
  expect(!plugin.collectives.empty(), "no device collectives: " + plugin.why_no_collectives);
  Programs p;
  const std::vector<HostArray> got = p.run(), want = by_hand();
  const char* names[] = {"sum", "max", "all_gather", "psum_scatter"};
  for (size_t k = 0; k < want.size(); ++k) {
    expect(same_bytes(got[k], want[k]), std::string(names[k]) + " differs from the values by hand");
  }
  std::printf("[%d] collectives through %s\n", spmd::process_index(), plugin.collectives.c_str());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "values";
  if (mode == "gpu") {
    if (!on_gpus()) return 0;  // the skip's line is printed
  } else {
    spmd::distributed::initialize();
  }
  if (mode == "values") {
    values();
  } else if (mode == "stall") {
    stall();
  } else if (mode == "group") {
    group();
  } else if (mode != "gpu") {
    expect(false, "unknown mode " + mode);
  }
  std::printf("[%d] %s %s\n", spmd::process_index(), failures == 0 ? "ok" : "FAILED", mode.c_str());
  std::fflush(stdout);
  spmd::distributed::shutdown();
  return failures == 0 ? 0 : 1;
}
