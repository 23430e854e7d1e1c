// The fixture of the gpu-labelled tests: GPU 0's context, host↔device copies, and a skip that
// says why where this process sees no GPU.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kernels/chain_cases.h"
#include "kernels/cuda/chain.h"
#include "kernels/cuda/gpu_context.h"

namespace spmd::test {

using kernels::cuda::DeviceBuffer;
using kernels::cuda::GpuContext;

class Gpu : public ::testing::Test {
 public:
  void SetUp() override {
    std::string why;
    if (kernels::cuda::visible_gpus(&why) == 0) GTEST_SKIP() << "no GPU visible: " << why;
    gpu_ = &GpuContext::get(0);
  }
  GpuContext& gpu() { return *gpu_; }

  DeviceBuffer upload(const Bytes& host) {
    DeviceBuffer buffer(gpu(), std::max<size_t>(host.size(), 1));
    buffer.copy_from_host(host.data(), host.size());
    return buffer;
  }
  Bytes download(const DeviceBuffer& buffer, size_t bytes) {
    Bytes host(bytes);
    buffer.copy_to_host(host.data(), bytes);
    gpu().synchronize();
    return host;
  }

  // The chain run on the GPU, its output poisoned first so that an unwritten element shows.
  Bytes gpu_chain_result(const ChainCase& c) {
    std::vector<DeviceBuffer> buffers;
    std::vector<kernels::Input> inputs;
    for (const ChainValue& v : c.inputs) {
      buffers.push_back(upload(v.bytes));
      inputs.push_back({buffers.back().data(), v.elements});
    }
    const size_t bytes = static_cast<size_t>(c.n) * dtype_size(c.out());
    DeviceBuffer out = upload(Bytes(bytes, std::byte{0xA5}));
    kernels::cuda::run_chain(gpu(), c.steps, inputs, out.data(), c.n);
    return download(out, bytes);
  }

  // Each case of `cases` whose output or input dtype passes `keep`, on the GPU and on the CPU.
  template <class Keep>
  void expect_cases_match(const std::vector<ChainCase>& cases, Keep keep) {
    int run = 0;
    for (const ChainCase& c : cases) {
      if (!keep(c)) continue;
      ++run;
      EXPECT_TRUE(chain_values_match(c, gpu_chain_result(c), cpu_chain_result(c)));
    }
    EXPECT_GT(run, 0) << "no case was run";
  }

 private:
  GpuContext* gpu_ = nullptr;
};

}  // namespace spmd::test
