// One GPU of this process as its kernels use it: the device's one stream, its stream-ordered
// memory pool, its cuBLAS handle and the word in which kernels report a failure (and a second
// stream that captured calls record from: Capture below, call_graph.h).
//
// Work is queued on the stream and a call returns before it finishes (as JAX's dispatch does;
// call_queued() bounds how far the host runs ahead); synchronize() waits for everything queued
// and throws what a kernel reported (an integer division by zero), so an error surfaces where the
// user waits (block_until_ready, to_host).
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
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/cuda/calls_in_flight.h"
#include "kernels/cuda/replay_plan.h"

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
  // The stream this thread queues the GPU's work on: the GPU's one stream, or, while this
  // thread captures a call (Capture), the stream the capture records from.
  cudaStream_t stream() const;
  // The GPU's one stream, whatever the calling thread is doing (a captured graph's launch).
  cudaStream_t main_stream() const { return stream_; }
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
  // A jit call's work is queued on the stream (Backend::call_queued): returns at once while no
  // more than SPMD_GPU_CALLS_IN_FLIGHT calls (calls_in_flight.h; 32 unset) are unfinished, else
  // waits for the oldest beyond them and throws a fault it met. With the bound 0 it is
  // synchronize(). A division by zero a kernel reported surfaces at the next synchronize().
  void call_queued();

  // A call of this GPU's being captured into a CUDA graph, or measured for one, on one thread
  // (call_graph.h; a CaptureScope makes it the thread's). While it is, on that thread:
  // - with an arena, stream() is the capture stream; allocate() hands out the arena's pieces and
  //   throws ArenaFull when the arena has no room; free() leaves them alone (they go back when
  //   the arena is reset) and defers any other memory's to `deferred`: the graph may read it
  //   when it runs, after the capture, and the capture's owner frees it after the launch;
  // - without one, allocate() counts the bytes it gives, rounded as the arena would take them;
  // - with an arena, a copy from or to host memory throws NotCapturable (device_memory.h,
  //   DeviceBuffer): a graph would read or write the host's buffer when it is launched, not
  //   when it was made.
  struct Capture {
    BumpArena* arena = nullptr;
    std::shared_ptr<void> owner;  // the arena's memory: each block made from it holds it
    size_t counted = 0;
    std::vector<void*> deferred;  // frees to make once the captured work is queued
  };
  // The capture active for this GPU on the calling thread, or null.
  Capture* capture() const;

  GpuContext(const GpuContext&) = delete;
  GpuContext& operator=(const GpuContext&) = delete;
  ~GpuContext();

 private:
  explicit GpuContext(int ordinal);

  int ordinal_;
  std::string name_;
  int multiprocessors_ = 0;
  cudaStream_t stream_ = nullptr;
  cudaStream_t capture_stream_ = nullptr;  // what captures record from (Capture)
  int* error_word_ = nullptr;
  int* error_host_ = nullptr;  // pinned: where synchronize() reads the error word
  CallsInFlight calls_;        // call_queued()'s: one event per unfinished call
  std::mutex blas_mutex_;
  cublasHandle_t blas_ = nullptr;
};

// Thrown by allocate() when a captured call's arena has no room left (GpuContext::Capture).
class ArenaFull : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Thrown by a copy from or to host memory inside a captured call (GpuContext::Capture).
class NotCapturable : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Makes `capture` the calling thread's capture of `gpu` until destroyed, then restores the one
// before. Not copyable; destroy it on the thread that made it.
class CaptureScope {
 public:
  CaptureScope(const GpuContext& gpu, GpuContext::Capture& capture);
  ~CaptureScope();
  CaptureScope(const CaptureScope&) = delete;
  CaptureScope& operator=(const CaptureScope&) = delete;

 private:
  const GpuContext* previous_gpu_;
  GpuContext::Capture* previous_;
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
