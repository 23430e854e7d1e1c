#include "kernels/cuda/call_graph.h"

#include <atomic>
#include <cstdlib>
#include <cstring>

#include "kernels/cuda/status.h"

namespace spmd::kernels::cuda {
namespace {

std::atomic<int64_t> direct_calls{0}, captured_calls{0}, instantiations{0}, fallbacks{0},
    replayed_calls{0};

// The largest arena a program's captures may take: an eighth of the GPU's memory, or none when
// SPMD_GPU_GRAPHS=0.
size_t most_arena_bytes(GpuContext& gpu) {
  if (!graphs_enabled()) return 0;
  size_t free = 0, total = 0;
  check_cuda(cudaSetDevice(gpu.ordinal()), "cudaSetDevice", gpu.ordinal());
  check_cuda(cudaMemGetInfo(&free, &total), "cudaMemGetInfo", gpu.ordinal());
  return total / 8;
}

}  // namespace

bool graphs_enabled() {
  static const bool enabled = [] {
    const char* v = std::getenv("SPMD_GPU_GRAPHS");
    return !(v && std::strcmp(v, "0") == 0);
  }();
  return enabled;
}

CallGraph::CallGraph(GpuContext& gpu) : gpu_(gpu), policy_(most_arena_bytes(gpu)) {}

CallGraph::~CallGraph() { drop_graphs(); }

void CallGraph::drop_graphs() {
  for (cudaGraphExec_t& e : execs_) {
    if (e) cudaGraphExecDestroy(e);
    e = nullptr;
  }
  slots_.clear();
}

CallGraph::Counts CallGraph::counts() {
  return {direct_calls.load(), captured_calls.load(), instantiations.load(), fallbacks.load(),
          replayed_calls.load()};
}

bool CallGraph::holds(const void* p) const {
  const std::lock_guard lock(mutex_);
  return arena_ && p && arena_->holds(p);
}

CallGraph::Outcome CallGraph::run(std::span<const void* const> key, bool may_replay,
                                  const Call& call) {
  std::unique_lock lock(mutex_, std::try_to_lock);
  if (!lock.owns_lock() || policy_.mode() == ReplayPolicy::Mode::kDirect) {
    if (lock.owns_lock()) lock.unlock();
    ++direct_calls;
    call(false);
    return Outcome::kDirect;
  }
  if (policy_.mode() == ReplayPolicy::Mode::kMeasure) {
    GpuContext::Capture counting;
    {
      const CaptureScope scope(gpu_, counting);
      ++direct_calls;
      call(false);
    }
    policy_.measured(counting.counted);
    return Outcome::kDirect;
  }
  // The arena's last results must have been copied out (a caller that kept them runs directly).
  if (memory_ && memory_.use_count() > 1) {
    ++direct_calls;
    call(false);
    return Outcome::kDirect;
  }
  if (const int slot = may_replay ? slots_.find(key) : -1; slot >= 0) {
    check_cuda(cudaGraphLaunch(execs_[static_cast<size_t>(slot)], gpu_.main_stream()),
               "cudaGraphLaunch", gpu_.ordinal());
    slots_.touch(slot);
    ++replayed_calls;
    return Outcome::kReplayed;
  }
  return run_captured(key, call);
}

void CallGraph::make_arena(size_t bytes) {
  // An arena of no bytes (a call that allocates nothing) is kept too: remaking it would drop
  // the kept graphs at every call.
  if (arena_ && arena_->capacity() >= bytes) return;
  drop_graphs();  // they read and write the old arena
  arena_.reset();
  memory_.reset();
  if (bytes > 0) memory_ = std::make_shared<DeviceBuffer>(gpu_, bytes);
  arena_ = std::make_unique<BumpArena>(memory_ ? memory_->data() : nullptr, bytes);
}

CallGraph::Outcome CallGraph::run_captured(std::span<const void* const> key, const Call& call) {
  make_arena(policy_.arena_bytes());
  arena_->reset();
  GpuContext::Capture capture{arena_.get(), memory_, 0, {}};
  capture.deferred.reserve(64);
  cudaGraph_t graph = nullptr;
  bool ran = false, overflowed = false;
  {
    const CaptureScope scope(gpu_, capture);
    check_cuda(cudaSetDevice(gpu_.ordinal()), "cudaSetDevice", gpu_.ordinal());
    check_cuda(cudaStreamBeginCapture(gpu_.stream(), cudaStreamCaptureModeThreadLocal),
               "cudaStreamBeginCapture", gpu_.ordinal());
    try {
      call(true);
      ran = true;
    } catch (const ArenaFull&) {
      overflowed = true;
    } catch (...) {  // not capturable, or an error the direct run below raises again
    }
    if (cudaStreamEndCapture(gpu_.stream(), &graph) != cudaSuccess) ran = false;
  }
  capture.owner.reset();
  const bool launched = ran && launch(graph, key);
  // Memory the call let go of, freed after the graph on the GPU's stream (or, when it did not
  // run, before the direct run, which reads none of it: its inputs are the caller's).
  for (void* p : capture.deferred) gpu_.free(p);
  if (launched) {
    ++captured_calls;
    return Outcome::kCaptured;
  }
  if (graph) cudaGraphDestroy(graph);
  cudaGetLastError();  // a capture's failures are not sticky: clear them for the direct run
  ++fallbacks;
  if (overflowed) {
    policy_.overflowed(arena_->asked());
  } else {
    policy_.failed();
  }
  ++direct_calls;
  call(false);
  return Outcome::kDirect;
}

bool CallGraph::launch(cudaGraph_t graph, std::span<const void* const> key) {
  const int slot = slots_.victim();
  cudaGraphExec_t& exec = execs_[static_cast<size_t>(slot)];
  if (exec) {
    cudaGraphExecUpdateResultInfo info{};
    if (cudaGraphExecUpdate(exec, graph, &info) != cudaSuccess) {
      cudaGetLastError();
      cudaGraphExecDestroy(exec);
      exec = nullptr;
    }
  }
  if (!exec) {
    if (cudaGraphInstantiate(&exec, graph, 0) != cudaSuccess) {
      cudaGetLastError();
      exec = nullptr;
      slots_.forget(slot);
      return false;
    }
    ++instantiations;
  }
  slots_.set(slot, key);
  cudaGraphDestroy(graph);
  check_cuda(cudaGraphLaunch(exec, gpu_.main_stream()), "cudaGraphLaunch", gpu_.ordinal());
  return true;
}

}  // namespace spmd::kernels::cuda
