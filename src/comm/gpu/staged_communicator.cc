#include "comm/gpu/staged_communicator.h"

#include <cuda_runtime.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <mutex>
#include <string>

#include "spmd/error.h"

namespace spmd {
namespace {

// A failed CUDA call of the staging as an spmd error naming the call, the GPU and the process:
// ResourceExhausted for out of memory, else Error (kernels/cuda/status.h says more of each
// status; the layers keep this one apart from it).
void check_cuda(cudaError_t status, std::string_view call, int gpu) {
  if (status == cudaSuccess) return;
  cudaGetLastError();
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  const std::string message =
      fmt::format("{} failed on GPU {} of pid {} on host {}: {} ({})", call, gpu, getpid(), host,
                  cudaGetErrorString(status), cudaGetErrorName(status));
  if (status == cudaErrorMemoryAllocation) throw ResourceExhausted(message);
  throw Error(message);
}

class StagedCommunicator final : public DeviceCommunicator {
 public:
  StagedCommunicator(Communicator host, int gpu) : host_(std::move(host)), gpu_(gpu) {}

  ~StagedCommunicator() override {
    if (staging_) {
      if (last_stream_) cudaStreamSynchronize(last_stream_);  // the last copy back reads it
      cudaFreeHost(staging_);
    }
  }

  int rank() const override { return host_.rank(); }
  int size() const override { return host_.size(); }

  void all_reduce(const void* in, void* out, size_t count, DType dtype, ReduceOp op,
                  void* stream) override {
    const size_t bytes = count * dtype_size(dtype);
    run(in, bytes, out, bytes, stream,
        [&](std::byte* s) { host_.all_reduce(dtype, s, s, count, op); });
  }
  void all_gather(const void* in, void* out, size_t count, DType dtype, void* stream) override {
    const size_t bytes = count * dtype_size(dtype);
    const size_t total = bytes * static_cast<size_t>(size());
    run(
        in, bytes, out, total, stream,
        [&](std::byte* s) { host_.all_gather(dtype, s, s + total, count); }, total);
  }
  void reduce_scatter(const void* in, void* out, size_t count, DType dtype, ReduceOp op,
                      void* stream) override {
    const size_t bytes = count * dtype_size(dtype);
    const size_t total = bytes * static_cast<size_t>(size());
    run(
        in, total, out, bytes, stream,
        [&](std::byte* s) { host_.reduce_scatter(dtype, s, s + total, count, op); }, total);
  }
  void broadcast(const void* in, void* out, size_t count, DType dtype, int root,
                 void* stream) override {
    const size_t bytes = count * dtype_size(dtype);
    run(rank() == root ? in : nullptr, bytes, out, bytes, stream,
        [&](std::byte* s) { host_.broadcast(dtype, s, s, count, root); });
  }

  DeviceCommStatus poll() override {
    std::lock_guard lock(mutex_);
    if (aborted_) return {DeviceCommState::kFailed, "the communicator was aborted"};
    return status_;
  }

  void abort() override {
    std::lock_guard lock(mutex_);
    aborted_ = true;
  }

 private:
  // Device `in` (in_bytes; none when null) to staging, `collective` on the staging buffer, and
  // out_bytes of the result back to device `out`. The result is read from offset `result_at`.
  template <class Collective>
  void run(const void* in, size_t in_bytes, void* out, size_t out_bytes, void* stream,
           Collective&& collective, size_t result_at = 0) {
    {
      std::lock_guard lock(mutex_);
      if (aborted_ || status_.state == DeviceCommState::kFailed) {
        throw FailedPrecondition(fmt::format(
            "a collective on GPU {} after its staged communicator failed or was aborted: make a "
            "new one",
            gpu_));
      }
    }
    auto* s = static_cast<cudaStream_t>(stream);
    last_stream_ = s;
    std::byte* staging = reserve(result_at + std::max(in_bytes, out_bytes), s);
    if (in != nullptr && in_bytes > 0) {
      check_cuda(cudaMemcpyAsync(staging, in, in_bytes, cudaMemcpyDeviceToHost, s),
                 "cudaMemcpyAsync (collective input to the host)", gpu_);
    }
    check_cuda(cudaStreamSynchronize(s), "cudaStreamSynchronize (collective input)", gpu_);
    try {
      collective(staging);
    } catch (const PeerFailure& e) {
      fail(e.what(), true);
      throw;
    } catch (const Error& e) {
      fail(e.what(), false);
      throw;
    }
    if (out_bytes > 0) {
      check_cuda(cudaMemcpyAsync(out, staging + result_at, out_bytes, cudaMemcpyHostToDevice, s),
                 "cudaMemcpyAsync (collective result to the GPU)", gpu_);
    }
  }

  // A pinned buffer of at least `bytes`, once the stream no longer reads the old one.
  std::byte* reserve(size_t bytes, cudaStream_t stream) {
    check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize (staging reuse)", gpu_);
    if (bytes <= capacity_) return staging_;
    if (staging_) cudaFreeHost(staging_);
    staging_ = nullptr;
    capacity_ = 0;
    void* p = nullptr;
    check_cuda(cudaMallocHost(&p, bytes), fmt::format("cudaMallocHost of {} bytes", bytes), gpu_);
    staging_ = static_cast<std::byte*>(p);
    capacity_ = bytes;
    return staging_;
  }

  void fail(std::string error, bool peer_lost) {
    std::lock_guard lock(mutex_);
    status_ = {DeviceCommState::kFailed, std::move(error), peer_lost};
  }

  Communicator host_;
  int gpu_;
  cudaStream_t last_stream_ = nullptr;
  std::byte* staging_ = nullptr;
  size_t capacity_ = 0;
  std::mutex mutex_;
  DeviceCommStatus status_;
  bool aborted_ = false;
};

}  // namespace

std::unique_ptr<DeviceCommunicator> make_staged_communicator(Communicator host, int gpu) {
  return std::make_unique<StagedCommunicator>(std::move(host), gpu);
}

}  // namespace spmd
