#include "spmd-bench/gpu_bench.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <nlohmann/json.hpp>
#include <random>
#include <vector>

#include "kernels/cuda/chain.h"
#include "kernels/cuda/fill.h"
#include "kernels/cuda/gpu_context.h"
#include "kernels/cuda/matmul.h"
#include "kernels/cuda/status.h"
#include "spmd/dtype.h"
#include "spmd/error.h"

namespace spmd::bench {
namespace {

using kernels::ChainStep;
using kernels::cuda::check_cublas;
using kernels::cuda::check_cuda;
using kernels::cuda::DeviceBuffer;
using kernels::cuda::GpuContext;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Seconds per call of `a` and of `b`, taken in turns, each timed by events on the stream.
std::pair<double, double> time_in_turns(GpuContext& gpu, int iterations,
                                        const std::function<void()>& a,
                                        const std::function<void()>& b) {
  cudaEvent_t start, stop;
  check_cuda(cudaEventCreate(&start), "cudaEventCreate", gpu.ordinal());
  check_cuda(cudaEventCreate(&stop), "cudaEventCreate", gpu.ordinal());
  const auto once = [&](const std::function<void()>& f) {
    check_cuda(cudaEventRecord(start, gpu.stream()), "cudaEventRecord", gpu.ordinal());
    f();
    check_cuda(cudaEventRecord(stop, gpu.stream()), "cudaEventRecord", gpu.ordinal());
    check_cuda(cudaEventSynchronize(stop), "cudaEventSynchronize", gpu.ordinal());
    float ms = 0;
    check_cuda(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime", gpu.ordinal());
    return ms / 1e3;
  };
  for (int i = 0; i < 3; ++i) {
    once(a);
    once(b);
  }
  std::vector<double> ta, tb;
  for (int i = 0; i < iterations; ++i) {
    ta.push_back(once(a));
    tb.push_back(once(b));
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  gpu.synchronize();
  return {median(ta), median(tb)};
}

template <class T>
DeviceBuffer upload(GpuContext& gpu, const std::vector<T>& host) {
  DeviceBuffer buffer(gpu, host.size() * sizeof(T));
  buffer.copy_from_host(host.data(), host.size() * sizeof(T));
  gpu.synchronize();
  return buffer;
}

std::vector<uint16_t> random_bfloat16(int64_t count, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::vector<uint16_t> v(static_cast<size_t>(count));
  for (auto& x : v) x = to_bfloat16(d(rng)).bits;
  return v;
}

nlohmann::json bench_matmul(GpuContext& gpu, const GpuBenchOptions& o) {
  const int64_t s = o.matmul_size;
  const DeviceBuffer a = upload(gpu, random_bfloat16(s * s, 1));
  const DeviceBuffer b = upload(gpu, random_bfloat16(s * s, 2));
  DeviceBuffer ours(gpu, static_cast<size_t>(s * s) * 2),
      theirs(gpu, static_cast<size_t>(s * s) * 2);
  cublasHandle_t handle;
  check_cublas(cublasCreate(&handle), "cublasCreate", gpu.ordinal());
  check_cublas(cublasSetStream(handle, gpu.stream()), "cublasSetStream", gpu.ordinal());
  const float one = 1, zero = 0;
  const int n = static_cast<int>(s);
  const auto spmd_call = [&] {
    kernels::cuda::matmul(gpu, DType::kBFloat16, {1, s, s, s}, a.data(), b.data(), ours.data());
  };
  const auto cublas_call = [&] {
    check_cublas(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, b.data(),
                              CUDA_R_16BF, n, a.data(), CUDA_R_16BF, n, &zero, theirs.data(),
                              CUDA_R_16BF, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                 "cublasGemmEx", gpu.ordinal());
  };
  spmd_call();
  cublas_call();
  std::vector<uint16_t> x(static_cast<size_t>(s * s)), y(x.size());
  ours.copy_to_host(x.data(), x.size() * 2);
  theirs.copy_to_host(y.data(), y.size() * 2);
  gpu.synchronize();
  // cuBLAS may pick another algorithm for a strided batch of one: compare values, not bits.
  double diff = 0, norm = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double u = to_float(bfloat16{x[i]}), v = to_float(bfloat16{y[i]});
    diff += (u - v) * (u - v);
    norm += v * v;
  }
  const double relative = std::sqrt(diff / norm);
  const auto [t_spmd, t_cublas] = time_in_turns(gpu, o.iterations, spmd_call, cublas_call);
  cublasDestroy(handle);
  const double flops = 2.0 * double(s) * double(s) * double(s);
  return {{"op", "matmul_bf16"},
          {"size", s},
          {"spmd_ms", t_spmd * 1e3},
          {"cublas_ms", t_cublas * 1e3},
          {"spmd_tflops", flops / t_spmd / 1e12},
          {"cublas_tflops", flops / t_cublas / 1e12},
          {"ratio", t_cublas / t_spmd},
          {"relative_difference", relative},
          {"correct", relative < 1e-2}};
}

// a * b + c over float32 inputs 0, 1 and 2: the chain both benchmarks time.
constexpr ChainStep kMulAdd[] = {{ChainStep::Kind::kBinary,
                                  uint8_t(kernels::Binary::kMul),
                                  DType::kFloat32,
                                  DType::kFloat32,
                                  {kernels::chain_input(0), kernels::chain_input(1), 0}},
                                 {ChainStep::Kind::kBinary,
                                  uint8_t(kernels::Binary::kAdd),
                                  DType::kFloat32,
                                  DType::kFloat32,
                                  {kernels::chain_result(0), kernels::chain_input(2), 0}}};

nlohmann::json bench_chain(GpuContext& gpu, const GpuBenchOptions& o) {
  const int64_t n = o.elements;
  const size_t bytes = static_cast<size_t>(n) * 4;
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> d(-2.0f, 2.0f);
  std::vector<float> host(static_cast<size_t>(n));
  std::vector<DeviceBuffer> in;
  std::vector<std::vector<float>> probes;  // the first 4096 elements of each input
  for (int i = 0; i < 3; ++i) {
    for (auto& v : host) v = d(rng);
    in.push_back(upload(gpu, host));
    probes.emplace_back(host.begin(), host.begin() + std::min<int64_t>(n, 4096));
  }
  DeviceBuffer out(gpu, bytes), copy(gpu, bytes);
  const kernels::Input inputs[] = {{in[0].data(), n}, {in[1].data(), n}, {in[2].data(), n}};
  const auto spmd_call = [&] { kernels::cuda::run_chain(gpu, kMulAdd, inputs, out.data(), n); };
  const auto copy_call = [&] {
    check_cuda(
        cudaMemcpyAsync(copy.data(), in[0].data(), bytes, cudaMemcpyDeviceToDevice, gpu.stream()),
        "cudaMemcpyAsync(device to device)", gpu.ordinal());
  };
  spmd_call();
  std::vector<float> got(probes[0].size());
  out.copy_to_host(got.data(), got.size() * 4);
  gpu.synchronize();
  bool correct = true;
  for (size_t i = 0; i < got.size(); ++i) {
    const float want = probes[0][i] * probes[1][i] + probes[2][i];
    correct = correct && std::memcmp(&want, &got[i], 4) == 0;
  }
  const auto [t_chain, t_copy] = time_in_turns(gpu, o.iterations, spmd_call, copy_call);
  const double chain_bw = 4.0 * double(bytes) / t_chain / 1e9;
  const double copy_bw = 2.0 * double(bytes) / t_copy / 1e9;
  return {{"op", "a*b+c_f32"},           {"elements", n},         {"spmd_ms", t_chain * 1e3},
          {"copy_ms", t_copy * 1e3},     {"spmd_GBps", chain_bw}, {"copy_GBps", copy_bw},
          {"ratio", chain_bw / copy_bw}, {"correct", correct}};
}

// Host microseconds per call of f: the median over rounds of `calls` calls queued back to back,
// the device drained between rounds. A round is short enough that CUDA's launch queue never
// fills, so the time is the host's own; thousands of calls in a row would measure the rate at
// which the GPU runs them instead, once the queue is full.
double host_us_per_call(GpuContext& gpu, int calls, const std::function<void()>& f) {
  for (int i = 0; i < 10; ++i) f();
  gpu.synchronize();
  std::vector<double> rounds;
  for (int r = 0; r < 15; ++r) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < calls; ++i) f();
    const auto queued = std::chrono::steady_clock::now();
    gpu.synchronize();
    rounds.push_back(std::chrono::duration<double, std::micro>(queued - start).count() / calls);
  }
  return median(rounds);
}

// The host's cost of the operations a small training step is made of, each beside the cheapest
// stream operation (a 4-byte cudaMemsetAsync) and, for a product, cuBLAS's own call: where the
// step's time goes when the device waits for the host (bench/RESULTS.md, session 52's profile).
constexpr int kHostCalls = 100;

nlohmann::json bench_host_costs(GpuContext& gpu) {
  constexpr int64_t kN = 65536, kSide = 128;
  DeviceBuffer a(gpu, kN * 4), b(gpu, kN * 4), c(gpu, kN * 4), out(gpu, kN * 4);
  check_cuda(cudaMemsetAsync(a.data(), 0, kN * 4, gpu.stream()), "cudaMemsetAsync", gpu.ordinal());
  check_cuda(cudaMemsetAsync(b.data(), 0, kN * 4, gpu.stream()), "cudaMemsetAsync", gpu.ordinal());
  check_cuda(cudaMemsetAsync(c.data(), 0, kN * 4, gpu.stream()), "cudaMemsetAsync", gpu.ordinal());
  const kernels::Input inputs[] = {{a.data(), kN}, {b.data(), kN}, {c.data(), kN}};
  cublasHandle_t handle;
  check_cublas(cublasCreate(&handle), "cublasCreate", gpu.ordinal());
  check_cublas(cublasSetStream(handle, gpu.stream()), "cublasSetStream", gpu.ordinal());
  const float one = 1, zero = 0;
  const int side = static_cast<int>(kSide);
  nlohmann::json rows = nlohmann::json::array();
  const auto row = [&](const char* what, const std::function<void()>& f) {
    rows.push_back({{"op", what}, {"host_us", host_us_per_call(gpu, kHostCalls, f)}});
  };
  row("cudaMemsetAsync, 4 bytes", [&] {
    check_cuda(cudaMemsetAsync(out.data(), 0, 4, gpu.stream()), "cudaMemsetAsync", gpu.ordinal());
  });
  row("fill kernel, 65536 f32",
      [&] { kernels::cuda::fill(gpu, DType::kFloat32, 1.0, out.data(), kN); });
  row("allocate + free, 256 KiB", [&] { gpu.free(gpu.allocate(kN * 4)); });
  row("chain a*b+c, 65536 f32",
      [&] { kernels::cuda::run_chain(gpu, kMulAdd, inputs, out.data(), kN); });
  row("spmd matmul f32 128^3", [&] {
    kernels::cuda::matmul(gpu, DType::kFloat32, {1, kSide, kSide, kSide}, a.data(), b.data(),
                          out.data());
  });
  row("cublasGemmEx f32 128^3", [&] {
    check_cublas(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, side, side, side, &one, b.data(),
                              CUDA_R_32F, side, a.data(), CUDA_R_32F, side, &zero, out.data(),
                              CUDA_R_32F, side, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                 "cublasGemmEx", gpu.ordinal());
  });
  cublasDestroy(handle);
  return rows;
}

// What CUDA graphs would save a step bound by its launches (issue 45's train step: about 35
// launches, each 5 to 15 µs of host time): a stand-in step of 5 products (128³ float32) and 30
// chains (`a * b + c` of 65,536), queued one launch at a time, then captured once into a graph
// and replayed, then captured again every call into an update of the instantiated graph, then
// replayed after its chain kernels' parameters are all set again (what replaying with other
// buffers would cost per node). Host µs per step (rounds of 4 steps), and the step's time on
// the stream (events, in turns with the direct form).
constexpr int kGraphProducts = 5, kGraphChains = 30;

nlohmann::json bench_graph(GpuContext& gpu, int iterations) {
  constexpr int64_t kN = 65536, kSide = 128;
  DeviceBuffer a(gpu, kN * 4), b(gpu, kN * 4), c(gpu, kN * 4), out(gpu, kN * 4);
  for (DeviceBuffer* x : {&a, &b, &c}) {
    check_cuda(cudaMemsetAsync(x->data(), 0, kN * 4, gpu.stream()), "cudaMemsetAsync",
               gpu.ordinal());
  }
  const kernels::Input inputs[] = {{a.data(), kN}, {b.data(), kN}, {c.data(), kN}};
  const auto step = [&] {
    for (int i = 0; i < kGraphChains; ++i) {
      if (i % (kGraphChains / kGraphProducts) == 0) {
        kernels::cuda::matmul(gpu, DType::kFloat32, {1, kSide, kSide, kSide}, a.data(), b.data(),
                              out.data());
      }
      kernels::cuda::run_chain(gpu, kMulAdd, inputs, out.data(), kN);
    }
  };
  step();  // plans and modules made outside the capture
  gpu.synchronize();
  const auto capture = [&] {
    cudaGraph_t graph = nullptr;
    check_cuda(cudaStreamBeginCapture(gpu.stream(), cudaStreamCaptureModeThreadLocal),
               "cudaStreamBeginCapture", gpu.ordinal());
    step();
    check_cuda(cudaStreamEndCapture(gpu.stream(), &graph), "cudaStreamEndCapture", gpu.ordinal());
    return graph;
  };
  cudaGraph_t graph = capture();
  cudaGraphExec_t exec = nullptr;
  check_cuda(cudaGraphInstantiate(&exec, graph, 0), "cudaGraphInstantiate", gpu.ordinal());
  size_t count = 0;
  check_cuda(cudaGraphGetNodes(graph, nullptr, &count), "cudaGraphGetNodes", gpu.ordinal());
  std::vector<cudaGraphNode_t> nodes(count);
  check_cuda(cudaGraphGetNodes(graph, nodes.data(), &count), "cudaGraphGetNodes", gpu.ordinal());
  std::vector<std::pair<cudaGraphNode_t, cudaKernelNodeParams>> kernels_of;
  for (cudaGraphNode_t node : nodes) {
    cudaGraphNodeType type{};
    check_cuda(cudaGraphNodeGetType(node, &type), "cudaGraphNodeGetType", gpu.ordinal());
    if (type != cudaGraphNodeTypeKernel) continue;
    // cuBLAS's kernels are the driver's, not the runtime's: their parameters cannot be read
    // here, and the failure must not stay behind as the thread's last error for a later launch.
    cudaKernelNodeParams params{};
    if (cudaGraphKernelNodeGetParams(node, &params) == cudaSuccess) {
      kernels_of.emplace_back(node, params);
    } else {
      cudaGetLastError();
    }
  }
  const auto launch = [&] {
    check_cuda(cudaGraphLaunch(exec, gpu.stream()), "cudaGraphLaunch", gpu.ordinal());
  };
  const auto recapture = [&] {
    cudaGraph_t again = capture();
    cudaGraphExecUpdateResultInfo info{};
    check_cuda(cudaGraphExecUpdate(exec, again, &info), "cudaGraphExecUpdate", gpu.ordinal());
    check_cuda(cudaGraphDestroy(again), "cudaGraphDestroy", gpu.ordinal());
    launch();
  };
  const auto reset_nodes = [&] {
    for (const auto& [node, params] : kernels_of) {
      check_cuda(cudaGraphExecKernelNodeSetParams(exec, node, &params),
                 "cudaGraphExecKernelNodeSetParams", gpu.ordinal());
    }
    launch();
  };
  nlohmann::json rows = nlohmann::json::array();
  const auto row = [&](const char* what, const std::function<void()>& f) {
    rows.push_back({{"op", what}, {"host_us", host_us_per_call(gpu, 4, f)}});
  };
  row("step, one launch at a time", step);
  row("step, one graph launch", launch);
  row("step, captured into an update", recapture);
  row("step, chain nodes set again", reset_nodes);
  const auto [direct_s, graph_s] = time_in_turns(gpu, iterations, step, launch);
  check_cuda(cudaGraphExecDestroy(exec), "cudaGraphExecDestroy", gpu.ordinal());
  check_cuda(cudaGraphDestroy(graph), "cudaGraphDestroy", gpu.ordinal());
  return {{"host", rows},
          {"stream_us_direct", direct_s * 1e6},
          {"stream_us_graph", graph_s * 1e6},
          {"graph_nodes", count},
          {"kernel_nodes", kernels_of.size()}};  // those whose parameters can be set
}

}  // namespace

int run_gpu_bench(const GpuBenchOptions& o) try {
  GpuContext& gpu = GpuContext::get(o.gpu);
  const nlohmann::json matmul = bench_matmul(gpu, o);
  const nlohmann::json chain = bench_chain(gpu, o);
  const nlohmann::json host = bench_host_costs(gpu);
  const nlohmann::json graph = bench_graph(gpu, o.iterations);
  if (o.json) {
    fmt::print("{}\n", nlohmann::json{{"device", gpu.name()},
                                      {"results", {matmul, chain}},
                                      {"host_costs", host},
                                      {"graph", graph}}
                           .dump());
    return 0;
  }
  fmt::print("device: {} (GPU {})\n", gpu.name(), gpu.ordinal());
  fmt::print("{:<14} {:>12} {:>12} {:>9}  {}\n", "op", "spmd", "baseline", "ratio", "check");
  fmt::print("{:<14} {:>8.1f} TF/s {:>7.1f} TF/s {:>8.3f}x  {}\n", "matmul bf16",
             matmul["spmd_tflops"].get<double>(), matmul["cublas_tflops"].get<double>(),
             matmul["ratio"].get<double>(),
             fmt::format("{} cuBLAS's within {:.1e}",
                         matmul["correct"].get<bool>() ? "equals" : "DIFFERS FROM",
                         matmul["relative_difference"].get<double>()));
  fmt::print("{:<14} {:>8.0f} GB/s {:>7.0f} GB/s {:>8.3f}x  {}\n", "a*b+c f32",
             chain["spmd_GBps"].get<double>(), chain["copy_GBps"].get<double>(),
             chain["ratio"].get<double>(), chain["correct"].get<bool>() ? "exact" : "WRONG");
  fmt::print("host time per call (median of 15 rounds of {} calls queued):\n", kHostCalls);
  for (const auto& r : host) {
    fmt::print("  {:<28} {:>7.2f} us\n", r["op"].get<std::string>(), r["host_us"].get<double>());
  }
  fmt::print(
      "a step of {} products and {} chains, {} graph nodes ({} chains'); host time per "
      "step (median of 15 rounds of 4 steps):\n",
      kGraphProducts, kGraphChains, graph["graph_nodes"].get<size_t>(),
      graph["kernel_nodes"].get<size_t>());
  for (const auto& r : graph["host"]) {
    fmt::print("  {:<32} {:>8.2f} us\n", r["op"].get<std::string>(), r["host_us"].get<double>());
  }
  fmt::print("  step on the stream: {:.2f} us direct, {:.2f} us as a graph (events, in turns)\n",
             graph["stream_us_direct"].get<double>(), graph["stream_us_graph"].get<double>());
  return matmul["correct"].get<bool>() && chain["correct"].get<bool>() ? 0 : 1;
} catch (const Error& e) {
  fmt::print(stderr, "spmd-bench gpu: {}\n", e.what());
  return 1;
}

}  // namespace spmd::bench
