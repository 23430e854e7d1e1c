// One program's jit calls on one GPU, replayed as a CUDA graph (Backend::run_call): a small step
// is bound by the host's launches (about 35 in seed 002's train step, 4 to 15 µs of host time
// each), and capturing them into a graph that is launched once costs the host about 1.7 µs a
// launch (spmd-bench gpu's graph rows, bench/RESULTS.md session 66).
//
// ReplayPolicy (replay_plan.h) decides each call's course:
// - the first runs directly, counting the bytes it allocates;
// - later calls are captured into a graph (cudaStreamBeginCapture on a stream of the capture's
//   own, this thread only), taking all their memory from one arena made before the capture; the
//   graph updates one instantiated before (cudaGraphExecUpdate: the same topology, other
//   buffers), or is instantiated when it cannot, and is launched on the GPU's stream. Up to
//   GraphSlots::kSlots graphs are kept, each known by the input buffers it was captured with;
// - a call whose input buffers are one kept graph's is not captured at all: that graph is
//   launched again (about 1.3 µs of host time for the whole call), when the caller says it can
//   do without running the call (it knows where the last capture left each result);
// - a capture that runs out of arena runs the call directly and sizes the next arena larger; one
//   that fails otherwise (a host fallback waiting for the GPU, a copy from host memory) runs
//   the call directly, and the program's calls run directly from then on.
// The arena is the same memory every call, so the call's result blocks that lie in it
// (holds()) must be copied out before the next call: the caller does that. A call finds the
// arena still held by blocks of the last (a caller that kept them) runs directly.
// SPMD_GPU_GRAPHS=0 in the environment runs every call directly. Thread-safe: a call arriving
// while another thread is in one of the same program on the same GPU runs directly.
#pragma once

#include <cuda_runtime_api.h>

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>

#include "kernels/cuda/gpu_context.h"
#include "kernels/cuda/replay_plan.h"

namespace spmd::kernels::cuda {

// Whether calls are replayed as graphs: false where SPMD_GPU_GRAPHS=0 (read once).
bool graphs_enabled();

class CallGraph {
 public:
  explicit CallGraph(GpuContext& gpu);
  ~CallGraph();
  CallGraph(const CallGraph&) = delete;
  CallGraph& operator=(const CallGraph&) = delete;

  // The call's work, queued on GpuContext::stream(). Its argument says whether it may run again
  // (a capture that fails is followed by a direct run): then it must leave its inputs as they
  // were, and whatever it produces it overwrites.
  using Call = std::function<void(bool may_run_again)>;
  enum class Outcome { kDirect, kCaptured, kReplayed };
  // Runs the call as above: directly, captured (then the graph of `key`'s slot is updated with it
  // and launched), or, when `may_replay` and a graph was captured with inputs `key` (the call's
  // input buffers, in order), by launching that graph without running `call`: its results are
  // then where the captured call left them. Throws what the direct run of `call` throws, or a
  // CUDA error of the graph's launch.
  Outcome run(std::span<const void* const> key, bool may_replay, const Call& call);
  // Whether `p` points into the arena of this program's captured calls.
  bool holds(const void* p) const;

  // What calls did, summed over every program and GPU of this process (for tests).
  struct Counts {
    int64_t direct = 0;        // ran directly: measured, not capturable, or the arena held
    int64_t captured = 0;      // ran as a graph
    int64_t instantiated = 0;  // of those, graphs instantiated (the rest updated one)
    int64_t fell_back = 0;     // captures that failed (or ran out of arena) and ran directly
    int64_t replayed = 0;      // launched a graph without running the call
  };
  static Counts counts();

 private:
  Outcome run_captured(std::span<const void* const> key, const Call& call);
  // Whether the captured graph ran, in `key`'s slot; false when it could not.
  bool launch(cudaGraph_t graph, std::span<const void* const> key);
  void make_arena(size_t bytes);
  void drop_graphs();

  GpuContext& gpu_;
  mutable std::mutex mutex_;
  ReplayPolicy policy_;
  std::shared_ptr<DeviceBuffer> memory_;  // the arena's memory; blocks made from it hold it
  std::unique_ptr<BumpArena> arena_;
  GraphSlots slots_;
  std::array<cudaGraphExec_t, GraphSlots::kSlots> execs_{};  // by slot
};

}  // namespace spmd::kernels::cuda
