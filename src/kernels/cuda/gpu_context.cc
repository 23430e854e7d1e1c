#include "kernels/cuda/gpu_context.h"

#include <cuda_runtime.h>
#include <fmt/format.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <utility>

#include "kernels/cuda/status.h"
#include "spmd/error.h"

namespace spmd::kernels::cuda {
namespace {

constexpr int kMaxGpus = 64;

// The calling thread's capture (GpuContext::Capture) and its GPU.
struct ActiveCapture {
  const GpuContext* gpu = nullptr;
  GpuContext::Capture* capture = nullptr;
};
thread_local ActiveCapture active_capture;

}  // namespace

int visible_gpus(std::string* why_none) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    if (why_none)
      *why_none = fmt::format("{}: {}", cudaGetErrorName(status), cudaGetErrorString(status));
    cudaGetLastError();  // not sticky: clear it
    return 0;
  }
  if (count == 0 && why_none) *why_none = "the CUDA driver reports no GPU";
  return count;
}

GpuContext& GpuContext::get(int ordinal) {
  static std::mutex mutex;
  // Never destroyed: an array's device buffers can outlive static destruction (a global, a
  // Python object let go at exit), and their deleters give them back through their context.
  static auto& contexts = *new std::array<std::unique_ptr<GpuContext>, kMaxGpus>;
  // The contexts made, read without the lock: every allocation and copy asks for its GPU's, and
  // one made was of a GPU this process sees, as it will until it ends.
  static std::array<std::atomic<GpuContext*>, kMaxGpus> made{};
  if (ordinal >= 0 && ordinal < kMaxGpus) {
    if (GpuContext* gpu = made[static_cast<size_t>(ordinal)].load(std::memory_order_acquire))
      return *gpu;
  }
  std::string why;
  const int count = visible_gpus(&why);
  if (ordinal < 0 || ordinal >= count || ordinal >= kMaxGpus) {
    throw FailedPrecondition(fmt::format(
        "GPU {} of {} is not available: this process sees {} GPU(s){}{}; check nvidia-smi and "
        "CUDA_VISIBLE_DEVICES, or run on CPUs (SPMD_PLATFORMS=cpu)",
        ordinal, process_label(), count, count == 0 ? ": " : "", count == 0 ? why : ""));
  }
  std::lock_guard lock(mutex);
  auto& slot = contexts[static_cast<size_t>(ordinal)];
  if (!slot) {
    slot.reset(new GpuContext(ordinal));
    made[static_cast<size_t>(ordinal)].store(slot.get(), std::memory_order_release);
  }
  return *slot;
}

GpuContext::GpuContext(int ordinal)
    : ordinal_(ordinal), calls_(calls_in_flight_from(std::getenv("SPMD_GPU_CALLS_IN_FLIGHT"))) {
  check_cuda(cudaSetDevice(ordinal), "cudaSetDevice", ordinal);
  cudaDeviceProp properties{};
  check_cuda(cudaGetDeviceProperties(&properties, ordinal), "cudaGetDeviceProperties", ordinal);
  name_ = properties.name;
  multiprocessors_ = properties.multiProcessorCount;
  check_cuda(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate",
             ordinal);
  check_cuda(cudaStreamCreateWithFlags(&capture_stream_, cudaStreamNonBlocking),
             "cudaStreamCreate (captures)", ordinal);
  cudaMemPool_t pool = nullptr;
  check_cuda(cudaDeviceGetDefaultMemPool(&pool, ordinal), "cudaDeviceGetDefaultMemPool", ordinal);
  uint64_t keep_all = UINT64_MAX;
  check_cuda(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep_all),
             "cudaMemPoolSetAttribute(ReleaseThreshold)", ordinal);
  check_cuda(cudaMalloc(&error_word_, sizeof(int)), "cudaMalloc(error word)", ordinal);
  check_cuda(cudaMemset(error_word_, 0, sizeof(int)), "cudaMemset(error word)", ordinal);
  check_cuda(cudaMallocHost(&error_host_, sizeof(int)), "cudaMallocHost(error word)", ordinal);
}

GpuContext::~GpuContext() {
  // At process exit the driver may already be gone: errors here are ignored.
  if (blas_) cublasDestroy(blas_);
  if (error_host_) cudaFreeHost(error_host_);
  if (error_word_) cudaFree(error_word_);
  if (capture_stream_) cudaStreamDestroy(capture_stream_);
  if (stream_) cudaStreamDestroy(stream_);
}

cublasHandle_t GpuContext::blas() {
  std::lock_guard lock(blas_mutex_);
  if (!blas_) {
    check_cuda(cudaSetDevice(ordinal_), "cudaSetDevice", ordinal_);
    check_cublas(cublasCreate(&blas_), "cublasCreate", ordinal_);
    check_cublas(cublasSetStream(blas_, stream_), "cublasSetStream", ordinal_);
  }
  return blas_;
}

GpuContext::Capture* GpuContext::capture() const {
  return active_capture.gpu == this ? active_capture.capture : nullptr;
}

cudaStream_t GpuContext::stream() const {
  const Capture* c = capture();
  return c && c->arena ? capture_stream_ : stream_;
}

CaptureScope::CaptureScope(const GpuContext& gpu, GpuContext::Capture& capture)
    : previous_gpu_(active_capture.gpu), previous_(active_capture.capture) {
  active_capture = {&gpu, &capture};
}

CaptureScope::~CaptureScope() { active_capture = {previous_gpu_, previous_}; }

void* GpuContext::allocate(size_t bytes) {
  void* pointer = nullptr;
  if (bytes == 0) return nullptr;
  if (Capture* c = capture()) {
    if (c->arena) {
      if (std::byte* piece = c->arena->take(bytes)) return piece;
      throw ArenaFull(fmt::format("a captured call's arena of {} bytes on GPU {} is spent",
                                  c->arena->capacity(), ordinal_));
    }
    c->counted += BumpArena::rounded(bytes);
  }
  check_cuda(cudaSetDevice(ordinal_), "cudaSetDevice", ordinal_);
  const cudaError_t status = cudaMallocAsync(&pointer, bytes, stream_);
  if (status != cudaSuccess) {
    cudaGetLastError();  // out of memory is not sticky: clear it
    check_cuda(status, fmt::format("cudaMallocAsync of {} bytes", bytes), ordinal_);
  }
  return pointer;
}

void GpuContext::free(void* pointer) noexcept {
  if (pointer == nullptr) return;
  if (Capture* c = capture(); c && c->arena) {
    if (c->arena->holds(pointer)) return;
    try {
      c->deferred.push_back(pointer);
    } catch (...) {  // no memory for the list: leaked, never freed before the graph reads it
    }
    return;
  }
  cudaFreeAsync(pointer, stream_);
}

void GpuContext::synchronize() {
  if (const Capture* c = capture(); c && c->arena) {
    throw NotCapturable(fmt::format("a wait for GPU {} inside a captured call", ordinal_));
  }
  check_cuda(
      cudaMemcpyAsync(error_host_, error_word_, sizeof(int), cudaMemcpyDeviceToHost, stream_),
      "cudaMemcpyAsync(error word)", ordinal_);
  check_cuda(cudaStreamSynchronize(stream_), "cudaStreamSynchronize", ordinal_);
  calls_.clear();  // every call queued before has finished
  if (*error_host_ != 0) {
    *error_host_ = 0;
    check_cuda(cudaMemsetAsync(error_word_, 0, sizeof(int), stream_), "cudaMemsetAsync", ordinal_);
    // The error word says that a division or a remainder divided by zero, not which.
    throw InvalidArgument(
        fmt::format("div or rem: integer division by zero in a kernel on GPU {} of {}", ordinal_,
                    process_label()));
  }
}

void GpuContext::call_queued() {
  if (calls_.most() == 0) {
    synchronize();
    return;
  }
  cudaEvent_t event = nullptr;
  check_cuda(cudaEventCreateWithFlags(&event, cudaEventDisableTiming), "cudaEventCreateWithFlags",
             ordinal_);
  const std::shared_ptr<CUevent_st> owned(event, [](cudaEvent_t e) { cudaEventDestroy(e); });
  check_cuda(cudaEventRecord(event, stream_), "cudaEventRecord", ordinal_);
  calls_.queued([owned, ordinal = ordinal_] {
    check_cuda(cudaEventSynchronize(owned.get()),
               "cudaEventSynchronize (a jit call queued earlier)", ordinal);
  });
}

DeviceBuffer::DeviceBuffer(GpuContext& gpu, size_t bytes)
    : gpu_(&gpu), data_(static_cast<std::byte*>(gpu.allocate(bytes))), bytes_(bytes) {}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : gpu_(std::exchange(other.gpu_, nullptr)),
      data_(std::exchange(other.data_, nullptr)),
      bytes_(std::exchange(other.bytes_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    if (gpu_) gpu_->free(data_);
    gpu_ = std::exchange(other.gpu_, nullptr);
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

DeviceBuffer::~DeviceBuffer() {
  if (gpu_) gpu_->free(data_);
}

namespace {

void refuse_host_copy_in_capture(const GpuContext& gpu, const char* what) {
  if (const GpuContext::Capture* c = gpu.capture(); c && c->arena) {
    throw NotCapturable(fmt::format("{} inside a captured call on GPU {}", what, gpu.ordinal()));
  }
}

}  // namespace

void DeviceBuffer::copy_from_host(const void* host, size_t bytes) {
  refuse_host_copy_in_capture(*gpu_, "a copy from host memory");
  if (bytes > bytes_) {
    throw InvalidArgument(
        fmt::format("copy_from_host: {} bytes into a buffer of {}", bytes, bytes_));
  }
  if (bytes == 0) return;
  check_cuda(cudaMemcpyAsync(data_, host, bytes, cudaMemcpyHostToDevice, gpu_->stream()),
             "cudaMemcpyAsync(host to device)", gpu_->ordinal());
}

void DeviceBuffer::copy_to_host(void* host, size_t bytes) const {
  refuse_host_copy_in_capture(*gpu_, "a copy to host memory");
  if (bytes > bytes_) {
    throw InvalidArgument(fmt::format("copy_to_host: {} bytes from a buffer of {}", bytes, bytes_));
  }
  if (bytes == 0) return;
  check_cuda(cudaMemcpyAsync(host, data_, bytes, cudaMemcpyDeviceToHost, gpu_->stream()),
             "cudaMemcpyAsync(device to host)", gpu_->ordinal());
}

}  // namespace spmd::kernels::cuda
