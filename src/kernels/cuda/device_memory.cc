#include "kernels/cuda/device_memory.h"

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <array>
#include <atomic>
#include <cstring>
#include <memory>
#include <mutex>
#include <vector>

#include "kernels/cuda/copy_plan.h"
#include "kernels/cuda/gpu_context.h"
#include "kernels/cuda/gpu_scope.h"
#include "kernels/cuda/staging_ring.h"
#include "kernels/cuda/status.h"
#include "spmd/error.h"

namespace spmd::kernels::cuda {
namespace {

GpuContext& gpu_of(MemorySpace memory) {
  if (memory.kind != MemorySpace::Kind::kDevice) {
    throw InvalidArgument(
        fmt::format("the CUDA backend has no {} memory of its own", memory.to_string()));
  }
  return GpuContext::get(memory.local_hardware_id);
}

cudaMemcpyKind kind_of(CopyPlan::Kind kind) {
  switch (kind) {
    case CopyPlan::Kind::kHostToDevice:
      return cudaMemcpyHostToDevice;
    case CopyPlan::Kind::kDeviceToHost:
      return cudaMemcpyDeviceToHost;
    default:
      return cudaMemcpyDeviceToDevice;
  }
}

// Copies of at least this many bytes go through the GPU's pinned staging buffers (below it,
// CUDA's own staging of pageable memory costs less than the extra host copy).
constexpr size_t kStagedBytes = size_t{1} << 20;
constexpr size_t kStagingBufferBytes = size_t{4} << 20;
constexpr int kStagingBuffers = 4;
constexpr int kMaxGpus = 64;

// The ring's view of one GPU: pinned buffers, and one event per buffer as its fence.
class GpuStaging final : public StagingDevice {
 public:
  explicit GpuStaging(GpuContext& gpu) : gpu_(gpu), events_(kStagingBuffers, nullptr) {
    for (cudaEvent_t& e : events_) {
      check_cuda(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreate",
                 gpu.ordinal());
    }
  }
  ~GpuStaging() override {
    for (cudaEvent_t e : events_) cudaEventDestroy(e);
  }
  GpuStaging(const GpuStaging&) = delete;
  GpuStaging& operator=(const GpuStaging&) = delete;

  void* allocate_pinned(size_t bytes) override {
    void* p = nullptr;
    check_cuda(cudaHostAlloc(&p, bytes, cudaHostAllocDefault),
               fmt::format("cudaHostAlloc of {} bytes", bytes), gpu_.ordinal());
    return p;
  }
  void free_pinned(void* buffer) noexcept override { cudaFreeHost(buffer); }
  void mark(int slot) override {
    check_cuda(cudaEventRecord(events_.at(static_cast<size_t>(slot)), gpu_.stream()),
               "cudaEventRecord", gpu_.ordinal());
  }
  bool passed(int slot) override {
    const cudaError_t status = cudaEventQuery(events_.at(static_cast<size_t>(slot)));
    if (status == cudaErrorNotReady) {
      cudaGetLastError();  // not an error: clear it
      return false;
    }
    check_cuda(status, "cudaEventQuery", gpu_.ordinal());
    return true;
  }
  void wait(int slot) override {
    check_cuda(cudaEventSynchronize(events_.at(static_cast<size_t>(slot))), "cudaEventSynchronize",
               gpu_.ordinal());
  }

 private:
  GpuContext& gpu_;
  std::vector<cudaEvent_t> events_;
};

struct Staging {
  explicit Staging(GpuContext& gpu)
      : device(gpu), ring(device, kStagingBufferBytes, kStagingBuffers) {}
  GpuStaging device;
  StagingRing ring;
};

// GPU `gpu`'s ring, made on first use; it lives until the process ends, as the context does.
StagingRing& staging_of(GpuContext& gpu) {
  static std::mutex mutex;
  static std::array<std::unique_ptr<Staging>, kMaxGpus> stagings;
  if (gpu.ordinal() < 0 || gpu.ordinal() >= kMaxGpus) {
    throw InvalidArgument(fmt::format("no staging buffers for GPU {}", gpu.ordinal()));
  }
  const std::lock_guard lock(mutex);
  auto& slot = stagings[static_cast<size_t>(gpu.ordinal())];
  if (!slot) slot = std::make_unique<Staging>(gpu);
  return slot->ring;
}

void queue(GpuContext& gpu, void* to, const void* from, size_t bytes, cudaMemcpyKind kind) {
  check_cuda(cudaMemcpyAsync(to, from, bytes, kind, gpu.stream()),
             kind == cudaMemcpyHostToDevice ? "cudaMemcpyAsync(host to device)"
                                            : "cudaMemcpyAsync(device to host)",
             gpu.ordinal());
}

// Host to device in chunks through pinned buffers: each chunk is copied into a buffer and its
// DMA queued, so the host fills the next buffer while the GPU takes the last. Returns once the
// source is read.
void staged_to_device(GpuContext& gpu, const std::byte* from, std::byte* to, size_t bytes) {
  StagingRing& ring = staging_of(gpu);
  for (const auto& [at, n] : StagingRing::chunks(bytes, ring.buffer_bytes())) {
    const StagingRing::Slot slot = ring.acquire();
    if (slot.data == nullptr) {  // every buffer held by other threads: CUDA's own staging
      queue(gpu, to + at, from + at, n, cudaMemcpyHostToDevice);
      continue;
    }
    std::memcpy(slot.data, from + at, n);
    queue(gpu, to + at, slot.data, n, cudaMemcpyHostToDevice);
    ring.release(slot);
  }
}

// Device to host in chunks through pinned buffers, one chunk's DMA queued ahead of the one the
// host copies out. Returns once `to` holds every byte.
void staged_to_host(GpuContext& gpu, const std::byte* from, std::byte* to, size_t bytes) {
  StagingRing& ring = staging_of(gpu);
  StagingRing::Slot ahead;
  size_t ahead_at = 0, ahead_n = 0;
  const auto drain = [&] {
    if (ahead.data == nullptr) return;
    ring.wait_held(ahead);
    std::memcpy(to + ahead_at, ahead.data, ahead_n);
    ring.give_back(ahead);
    ahead = {};
  };
  for (const auto& [at, n] : StagingRing::chunks(bytes, ring.buffer_bytes())) {
    const StagingRing::Slot slot = ring.acquire();
    if (slot.data == nullptr) {  // no buffer free: straight into pageable memory, in order
      drain();
      queue(gpu, to + at, from + at, n, cudaMemcpyDeviceToHost);
      continue;
    }
    queue(gpu, slot.data, from + at, n, cudaMemcpyDeviceToHost);
    ring.fence(slot);
    drain();
    ahead = slot;
    ahead_at = at;
    ahead_n = n;
  }
  drain();
}

}  // namespace

std::shared_ptr<std::byte> allocate_device(MemorySpace memory, size_t bytes) {
  GpuContext& gpu = gpu_of(memory);
  auto* p = static_cast<std::byte*>(gpu.allocate(bytes));
  // A piece of a captured call's arena goes back with the arena: the block holds the arena.
  if (const GpuContext::Capture* c = gpu.capture(); c && c->arena && p && c->arena->holds(p)) {
    return {p, [owner = c->owner](std::byte*) {}};
  }
  return {p, [&gpu](std::byte* q) { gpu.free(q); }};
}

void copy_memory(const std::byte* from, MemorySpace from_memory, std::byte* to,
                 MemorySpace to_memory, size_t bytes) {
  const CopyPlan plan = plan_copy(from_memory, to_memory);
  const bool touches_host = plan.kind == CopyPlan::Kind::kHostToDevice ||
                            plan.kind == CopyPlan::Kind::kDeviceToHost || plan.drain_gpu >= 0 ||
                            plan.host_waits;
  if (touches_host && plan.stream_gpu >= 0) {
    if (const GpuContext::Capture* c = GpuContext::get(plan.stream_gpu).capture(); c && c->arena) {
      throw NotCapturable(fmt::format("a copy from {} to {} inside a captured call",
                                      from_memory.to_string(), to_memory.to_string()));
    }
  }
  if (plan.kind == CopyPlan::Kind::kHostToHost) {
    if (bytes > 0) std::memcpy(to, from, bytes);
    return;
  }
  if (plan.drain_gpu >= 0) GpuContext::get(plan.drain_gpu).synchronize();
  GpuContext& gpu = GpuContext::get(plan.stream_gpu);
  if (bytes > 0) {
    if (plan.kind == CopyPlan::Kind::kPeer) {
      check_cuda(cudaMemcpyPeerAsync(to, to_memory.local_hardware_id, from,
                                     from_memory.local_hardware_id, bytes, gpu.stream()),
                 "cudaMemcpyPeerAsync", gpu.ordinal());
    } else if (plan.kind == CopyPlan::Kind::kHostToDevice && bytes >= kStagedBytes) {
      staged_to_device(gpu, from, to, bytes);
    } else if (plan.kind == CopyPlan::Kind::kDeviceToHost && bytes >= kStagedBytes) {
      staged_to_host(gpu, from, to, bytes);
    } else {
      const cudaError_t status = cudaMemcpyAsync(to, from, bytes, kind_of(plan.kind), gpu.stream());
      if (status != cudaSuccess) {  // the message is made only for a failure
        check_cuda(status,
                   fmt::format("cudaMemcpyAsync({} to {})", from_memory.to_string(),
                               to_memory.to_string()),
                   gpu.ordinal());
      }
    }
  }
  if (plan.host_waits) gpu.synchronize();
}

void copy_pieces_on_device(MemorySpace memory, std::span<const Backend::CopyPiece> pieces) {
  // False once a driver refused a batch: each piece is queued alone from then on.
  static std::atomic<bool> batches{true};
  GpuContext& gpu = gpu_of(memory);
  std::vector<void*> to;
  std::vector<const void*> from;
  std::vector<size_t> sizes;
  for (const Backend::CopyPiece& p : pieces) {
    if (p.bytes == 0) continue;
    to.push_back(p.to);
    from.push_back(p.from);
    sizes.push_back(p.bytes);
  }
  if (to.empty()) return;
  if (to.size() > 1 && batches.load(std::memory_order_relaxed) && gpu.capture() == nullptr) {
    cudaMemcpyAttributes in_order{};
    in_order.srcAccessOrder = cudaMemcpySrcAccessOrderStream;
    size_t first = 0;  // in_order applies from the first copy on
    const cudaError_t status = cudaMemcpyBatchAsync(to.data(), from.data(), sizes.data(), to.size(),
                                                    &in_order, &first, 1, gpu.stream());
    if (status == cudaSuccess) return;
    cudaGetLastError();  // a refused batch queued nothing and is not sticky: copy piece by piece
    batches.store(false, std::memory_order_relaxed);
  }
  for (size_t k = 0; k < to.size(); ++k) {
    check_cuda(cudaMemcpyAsync(to[k], from[k], sizes[k], cudaMemcpyDeviceToDevice, gpu.stream()),
               "cudaMemcpyAsync(device to device)", gpu.ordinal());
  }
}

std::shared_ptr<void> bind_gpu(MemorySpace memory) {
  return std::make_shared<GpuScope>(gpu_of(memory));
}

void* gpu_stream(MemorySpace memory) { return gpu_of(memory).stream(); }

void gpu_synchronize(MemorySpace memory) { gpu_of(memory).synchronize(); }

void gpu_call_queued(MemorySpace memory) { gpu_of(memory).call_queued(); }

std::function<bool()> gpu_fence(MemorySpace memory) {
  GpuContext& gpu = gpu_of(memory);
  cudaEvent_t event = nullptr;
  check_cuda(cudaEventCreateWithFlags(&event, cudaEventDisableTiming), "cudaEventCreateWithFlags",
             gpu.ordinal());
  std::shared_ptr<CUevent_st> owned(event, [](cudaEvent_t e) { cudaEventDestroy(e); });
  check_cuda(cudaEventRecord(event, gpu.stream()), "cudaEventRecord", gpu.ordinal());
  return [owned] { return cudaEventQuery(owned.get()) != cudaErrorNotReady; };
}

}  // namespace spmd::kernels::cuda
