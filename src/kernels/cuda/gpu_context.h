// One GPU of this process as its kernels use it: the device's one stream, its stream-ordered
// memory pool, its cuBLAS handle and the word in which kernels report a failure.
//
// Work is queued on the stream and a call returns before it finishes (as JAX's dispatch does);
// synchronize() waits for everything queued and throws what a kernel reported (an integer
// division by zero), so an error surfaces where the user waits (block_until_ready, to_host).
// Memory comes from the device's default pool with its release threshold at the maximum: freed
// blocks stay in the pool for the next allocation of the stream instead of going back to the
// driver, as XLA's BFC allocator keeps them. Each GPU's context is made once, on first use, and
// lives until the process ends; every method is thread-safe, and work from several threads is
// ordered by the one stream.
// Open to tools/: spmd-bench gpu times these kernels beside cuBLAS and a device copy.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

namespace spmd::kernels::cuda {

// How many GPUs this process sees (CUDA_VISIBLE_DEVICES applied): 0 when there is no GPU, no
// driver, or a driver too old, never an error. `why_none` says which, when it is 0.
int visible_gpus(std::string* why_none = nullptr);

class GpuContext {
 public:
  // The context of GPU `ordinal` (0 ≤ ordinal < visible_gpus()); FailedPrecondition naming the
  // GPU and saying why when it cannot be used.
  static GpuContext& get(int ordinal);

  int ordinal() const { return ordinal_; }
  // The CUDA device name ("NVIDIA H100 80GB HBM3"), JAX's device_kind.
  const std::string& name() const { return name_; }
  int multiprocessors() const { return multiprocessors_; }
  // Blocks of 256 threads for a grid-stride loop over `n` elements: one per 256 elements, at most
  // 8 per multiprocessor, at least 1.
  int grid_blocks(int64_t n) const {
    const int64_t most = int64_t{multiprocessors_} * 8;
    return static_cast<int>(std::max<int64_t>(1, std::min<int64_t>((n + 255) / 256, most)));
  }
  cudaStream_t stream() const { return stream_; }
  // The stream's cuBLAS handle (made on first use); calls on it must hold blas_mutex().
  cublasHandle_t blas();
  std::mutex& blas_mutex() { return blas_mutex_; }

  // `bytes` of device memory, ordered on the stream: usable by work queued after this call.
  // ResourceExhausted naming the GPU and the size when the pool and the driver have no more.
  void* allocate(size_t bytes);
  // Returns memory from allocate() to the pool once the work queued before this call is done.
  void free(void* pointer) noexcept;

  // Where kernels report a failure: an int in device memory, 0 while all is well.
  int* error_word() const { return error_word_; }
  // Waits for all work queued on the stream; then throws InvalidArgument for a failure a kernel
  // reported (and clears it), or the CUDA error of a kernel that faulted.
  void synchronize();

  GpuContext(const GpuContext&) = delete;
  GpuContext& operator=(const GpuContext&) = delete;
  ~GpuContext();

 private:
  explicit GpuContext(int ordinal);

  int ordinal_;
  std::string name_;
  int multiprocessors_ = 0;
  cudaStream_t stream_ = nullptr;
  int* error_word_ = nullptr;
  int* error_host_ = nullptr;  // pinned: where synchronize() reads the error word
  std::mutex blas_mutex_;
  cublasHandle_t blas_ = nullptr;
};

// Device memory from a GpuContext, returned to its pool when destroyed. Move-only.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(GpuContext& gpu, size_t bytes);
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  ~DeviceBuffer();

  std::byte* data() const { return data_; }
  size_t size() const { return bytes_; }

  // Copies between this buffer and host memory, queued on the stream. The host side must stay
  // alive and unchanged until the copy is done (synchronize()).
  void copy_from_host(const void* host, size_t bytes);
  void copy_to_host(void* host, size_t bytes) const;

 private:
  GpuContext* gpu_ = nullptr;
  std::byte* data_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace spmd::kernels::cuda
