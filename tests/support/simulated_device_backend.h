// A kernel backend for tests of device memory (Block::allocate, to_memory, the jit executor's
// staging): the CPU backend's kernels over memory that this backend hands out as device memory
// (MemorySpace::device), as a GPU's backend would, but on the host. What a GPU would fault on, it
// reports instead: every pointer a kernel gets must lie in memory it handed out, and every copy's
// ends must be in the memory spaces the call names. So a computation that passes a host pointer
// to a device kernel, or reads device memory on the host through Block's checked accessors,
// fails here as on a GPU, and one that passes computes the CPU's values bit for bit.
//
// Install it with kernels::BackendOverride (its platform is "cpu"): jit then runs every CPU
// device's program in "device" memory. Thread-safe: device threads share it.
//
// Made with `replays` true, it also replays jit calls as a GPU's backend does (Backend::run_call;
// kernels/cuda/call_graph.h), so that the executor's handling of replayed calls is tested on the
// CPU. A program's first call runs directly; every later one runs with its allocations taken from
// an arena of the program's, from its start each time, so that its results lie where the last
// capture's did. A call whose inputs are the last capture's buffers, where the caller allows, is
// a replay: as a graph launched again, it leaves its results where the capture left them,
// computed from the same buffers (it runs the program again, the host's work a graph saves).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "kernels/backend.h"
#include "spmd/error.h"
#include "support/simulated_stream.h"

namespace spmd::testing {

class SimulatedDeviceBackend final : public kernels::Backend {
 public:
  struct Counts {
    int host_to_device = 0;
    int device_to_host = 0;
    int device_to_device = 0;
    int allocations = 0;  // made so far
    int live = 0;         // not yet given back
    int synchronizations = 0;
    int calls_queued = 0;  // jit calls that ended with their work queued (call_queued)
    int captured = 0;      // run_call's outcomes, with `replays`
    int replayed = 0;
  };

  explicit SimulatedDeviceBackend(bool replays = false) : replays_(replays) {}
  ~SimulatedDeviceBackend() override = default;
  SimulatedDeviceBackend(const SimulatedDeviceBackend&) = delete;
  SimulatedDeviceBackend& operator=(const SimulatedDeviceBackend&) = delete;

  Counts counts() const {
    const std::lock_guard lock(mutex_);
    return counts_;
  }
  // What reached a kernel or a copy that a GPU would have faulted on, one line each.
  std::vector<std::string> violations() const {
    const std::lock_guard lock(mutex_);
    return violations_;
  }
  // The thread bindings made and still held (bind_thread).
  int bindings_held() const {
    const std::lock_guard lock(mutex_);
    return bindings_;
  }

  std::string_view platform() const override { return "cpu"; }
  MemorySpace memory(int id) const override { return MemorySpace::device(id); }

  std::shared_ptr<std::byte> allocate(MemorySpace memory, size_t bytes) const override {
    if (memory.kind != MemorySpace::Kind::kDevice) violation("allocate in " + memory.to_string());
    if (const std::shared_ptr<Graph>& g = active_graph()) return g->take(bytes, g);
    const size_t rounded = (bytes + 63) / 64 * 64 + 64;  // never empty, so every block has a place
    auto* p = static_cast<std::byte*>(std::aligned_alloc(64, rounded));
    {
      const std::lock_guard lock(mutex_);
      regions_[p] = {bytes, memory.local_hardware_id};
      ++counts_.allocations;
      ++counts_.live;
    }
    return {p, [this](std::byte* q) {
              {
                const std::lock_guard lock(mutex_);
                regions_.erase(q);
                --counts_.live;
              }
              std::free(q);
            }};
  }

  void copy(const std::byte* from, MemorySpace from_memory, std::byte* to, MemorySpace to_memory,
            size_t bytes) const override {
    check_in(from, from_memory, "copy from");
    check_in(to, to_memory, "copy to");
    {
      const std::lock_guard lock(mutex_);
      const bool from_device = from_memory.kind == MemorySpace::Kind::kDevice;
      const bool to_device = to_memory.kind == MemorySpace::Kind::kDevice;
      if (from_device && to_device) ++counts_.device_to_device;
      if (!from_device && to_device) ++counts_.host_to_device;
      if (from_device && !to_device) ++counts_.device_to_host;
    }
    if (bytes > 0) std::memcpy(to, from, bytes);
  }

  std::shared_ptr<void> bind_thread(MemorySpace /*memory*/) const override {
    {
      const std::lock_guard lock(mutex_);
      ++bindings_;
    }
    return {nullptr, [this](void*) {
              const std::lock_guard lock(mutex_);
              --bindings_;
            }};
  }

  // Each device's stream: the kernels here finish before they return, but work a test queues
  // there (a device collective) runs later, in order, as on a GPU.
  void* stream(MemorySpace memory) const override { return &stream_of(memory); }
  std::function<bool()> fence(MemorySpace memory) const override {
    return stream_of(memory).fence();
  }
  // Waits for the device's stream, as a GPU's backend does at the end of a jit call: at most a
  // minute (a test communicator's collective on the stream waits until aborted), then
  // DeadlineExceeded.
  void synchronize(MemorySpace memory) const override {
    const std::function<bool()> passed = stream_of(memory).fence();
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(1);
    while (!passed()) {
      if (std::chrono::steady_clock::now() > deadline) {
        throw DeadlineExceeded("the simulated device's stream " + memory.to_string() +
                               " did not drain within a minute");
      }
      std::this_thread::yield();
    }
    const std::lock_guard lock(mutex_);
    ++counts_.synchronizations;
  }

  // The end of a jit call: counted, and nothing waited for (a GPU's waits only for calls beyond
  // its bound; block_until_ready and reads wait for the rest).
  void call_queued(MemorySpace /*memory*/) const override {
    const std::lock_guard lock(mutex_);
    ++counts_.calls_queued;
  }

  bool replays_calls() const override { return replays_; }
  CallRun run_call(MemorySpace memory, std::shared_ptr<void>& state,
                   std::span<const void* const> inputs, bool may_replay,
                   const std::function<void(bool)>& call) const override {
    if (!state) {  // the first call: directly
      state = make_graph(memory);
      call(false);
      return CallRun::kDirect;
    }
    const std::shared_ptr<Graph> g = std::static_pointer_cast<Graph>(state);
    const bool same =
        g->captured && std::equal(g->key.begin(), g->key.end(), inputs.begin(), inputs.end());
    g->used = 0;
    active_graph() = g;
    try {
      call(true);
    } catch (...) {
      active_graph() = nullptr;
      throw;
    }
    active_graph() = nullptr;
    const std::lock_guard lock(mutex_);
    if (may_replay && same) {
      ++counts_.replayed;
      return CallRun::kReplayed;
    }
    g->key.assign(inputs.begin(), inputs.end());
    g->captured = true;
    ++counts_.captured;
    return CallRun::kCaptured;
  }
  bool replay_holds(const std::shared_ptr<void>& state, const void* data) const override {
    if (!state) return false;
    const auto* g = static_cast<const Graph*>(state.get());
    const auto* p = static_cast<const std::byte*>(data);
    return p >= g->arena && p < g->arena + Graph::kBytes;
  }

  void chain(std::span<const kernels::ChainStep> s, std::span<const kernels::Input> in,
             std::byte* o, int64_t n) const override {
    for (const kernels::Input& i : in) on_device(i.data, "chain");
    on_device(o, "chain");
    cpu_.chain(s, in, o, n);
  }
  bool chain_reduce(std::span<const kernels::ChainStep> s, std::span<const kernels::Input> in,
                    int64_t outer, int64_t extent, int64_t inner, kernels::Reduce op,
                    std::byte* o) const override {
    for (const kernels::Input& i : in) on_device(i.data, "chain_reduce");
    on_device(o, "chain_reduce");
    return cpu_.chain_reduce(s, in, outer, extent, inner, op, o);
  }
  // As a GPU's: the executor makes a broadcast whole before a chain reads it.
  bool reads_broadcasts() const override { return false; }
  bool contracts_multiply_add() const override { return cpu_.contracts_multiply_add(); }

// `pointers` is a braced list, which parentheses would break.
// NOLINTBEGIN(bugprone-macro-parentheses)
#define SPMD_ON_DEVICE(method, params, pointers, args)                                       \
  void method params const override {                                                        \
    for (const void* p : std::initializer_list<const void*> pointers) on_device(p, #method); \
    cpu_.method args;                                                                        \
  }
  // NOLINTEND(bugprone-macro-parentheses)
  SPMD_ON_DEVICE(convert, (DType f, DType t, kernels::Input a, std::byte* o, int64_t n),
                 ({a.data, o}), (f, t, a, o, n))
  SPMD_ON_DEVICE(fill, (DType t, double v, std::byte* o, int64_t n), ({o}), (t, v, o, n))
  SPMD_ON_DEVICE(iota, (DType t, std::byte* o, int64_t n), ({o}), (t, o, n))
  SPMD_ON_DEVICE(reduce,
                 (kernels::Reduce op, DType t, const std::byte* in, const Shape& s, int axis,
                  DType ot, std::byte* o),
                 ({in, o}), (op, t, in, s, axis, ot, o))
  SPMD_ON_DEVICE(argmax, (DType t, const std::byte* in, const Shape& s, int axis, std::byte* o),
                 ({in, o}), (t, in, s, axis, o))
  SPMD_ON_DEVICE(broadcast,
                 (size_t w, const std::byte* in, const Shape& f, std::byte* o, const Shape& to),
                 ({in, o}), (w, in, f, o, to))
  SPMD_ON_DEVICE(transpose,
                 (size_t w, const std::byte* in, const Shape& s, std::span<const int> p,
                  std::byte* o),
                 ({in, o}), (w, in, s, p, o))
  SPMD_ON_DEVICE(slice,
                 (size_t w, const std::byte* in, const Shape& s, std::span<const int64_t> st,
                  const Shape& e, std::byte* o),
                 ({in, o}), (w, in, s, st, e, o))
  SPMD_ON_DEVICE(strided_slice,
                 (size_t w, const std::byte* in, const Shape& s, std::span<const int64_t> st,
                  std::span<const int64_t> sp, const Shape& e, std::byte* o),
                 ({in, o}), (w, in, s, st, sp, e, o))
  SPMD_ON_DEVICE(matmul,
                 (DType t, kernels::MatmulShape s, const std::byte* a, const std::byte* b,
                  std::byte* o),
                 ({a, b, o}), (t, s, a, b, o))
  SPMD_ON_DEVICE(random_bits, (kernels::RandomBits k, const kernels::RandomBlock& b, std::byte* o),
                 ({o}), (k, b, o))
  SPMD_ON_DEVICE(random_sample,
                 (const kernels::Sampler& s, const kernels::RandomBlock& b, std::byte* o), ({o}),
                 (s, b, o))
  SPMD_ON_DEVICE(random_permute,
                 (std::array<uint32_t, 2> k, size_t w, const std::byte* in, const Shape& s,
                  int axis, std::byte* o),
                 ({in, o}), (k, w, in, s, axis, o))
  SPMD_ON_DEVICE(random_gamma,
                 (const uint32_t* k, const float* a, int64_t n, kernels::GammaForm f, float* o),
                 ({k, a, o}), (k, a, n, f, o))
  SPMD_ON_DEVICE(ynn_softmax_rows, (const float* x, int64_t rows, int64_t k, float* o), ({x, o}),
                 (x, rows, k, o))
  SPMD_ON_DEVICE(ynn_power_sum_rows,
                 (const float* g, int64_t rows, int64_t k, const float* p, float* o), ({g, p, o}),
                 (g, rows, k, p, o))
  SPMD_ON_DEVICE(random_poisson, (const uint32_t* k, const float* l, int64_t n, int32_t* o),
                 ({k, l, o}), (k, l, n, o))
  SPMD_ON_DEVICE(cumsum, (DType t, const std::byte* in, const Shape& s, int axis, std::byte* o),
                 ({in, o}), (t, in, s, axis, o))
  SPMD_ON_DEVICE(cumprod, (DType t, const std::byte* in, const Shape& s, int axis, std::byte* o),
                 ({in, o}), (t, in, s, axis, o))
  SPMD_ON_DEVICE(search_sorted,
                 (DType t, const std::byte* a, int64_t n, const std::byte* q, int64_t c,
                  int32_t* o),
                 ({a, q, o}), (t, a, n, q, c, o))
  SPMD_ON_DEVICE(top_k, (DType t, const std::byte* in, int64_t n, int64_t k, int32_t* o), ({in, o}),
                 (t, in, n, k, o))
  SPMD_ON_DEVICE(take,
                 (size_t w, const std::byte* in, const Shape& s, int axis, const int32_t* i,
                  int64_t c, std::byte* o, const std::byte* f),
                 ({in, i, o}), (w, in, s, axis, i, c, o, f))
  SPMD_ON_DEVICE(scatter_add,
                 (DType t, const std::byte* u, const Shape& s, int axis, const int32_t* i,
                  int64_t c, std::byte* o),
                 ({u, i, o}), (t, u, s, axis, i, c, o))
  SPMD_ON_DEVICE(scatter,
                 (kernels::ScatterCombine h, DType t, const std::byte* u, const Shape& s, int axis,
                  const int32_t* i, int64_t c, std::byte* o),
                 ({u, i, o}), (h, t, u, s, axis, i, c, o))
  SPMD_ON_DEVICE(cholesky, (DType t, const std::byte* in, int64_t b, int64_t n, std::byte* o),
                 ({in, o}), (t, in, b, n, o))
  SPMD_ON_DEVICE(qr,
                 (DType t, const std::byte* in, int64_t b, int64_t m, int64_t n, std::byte* q,
                  std::byte* r),
                 ({in, q, r}), (t, in, b, m, n, q, r))
  SPMD_ON_DEVICE(triangular_solve,
                 (DType t, const std::byte* a, const std::byte* b, int64_t batch, int64_t m,
                  int64_t n, kernels::TriangularSolve how, std::byte* o),
                 ({a, b, o}), (t, a, b, batch, m, n, how, o))
#undef SPMD_ON_DEVICE
  void concatenate(size_t w, std::span<const std::byte* const> in, std::span<const Shape> s,
                   int axis, std::byte* o) const override {
    for (const std::byte* p : in) on_device(p, "concatenate");
    on_device(o, "concatenate");
    cpu_.concatenate(w, in, s, axis, o);
  }
  void sort(DType t, const std::byte* k, const kernels::SortSpec& s, const std::byte* p,
            std::byte* o) const override {
    on_device(k, "sort");
    if (p != nullptr) on_device(p, "sort");
    on_device(o, "sort");
    cpu_.sort(t, k, s, p, o);
  }

  // Throws (and records a violation) unless `p` lies in device memory this backend handed out:
  // for a test device communicator, which a GPU would fault on the same way.
  void check_on_device(const void* p, const char* what) const { on_device(p, what); }

 private:
  // One program's replayed calls: its arena (one region of device memory) and the input buffers
  // of its last capture.
  struct Graph {
    static constexpr size_t kBytes = size_t{4} << 20;
    std::byte* arena = nullptr;
    size_t used = 0;
    bool captured = false;
    std::vector<const void*> key;
    std::function<void()> release;  // gives the arena back
    ~Graph() { release(); }
    // The next piece of the arena, kept alive by `self` (the arena outlives every block in it).
    std::shared_ptr<std::byte> take(size_t bytes, const std::shared_ptr<Graph>& self) {
      const size_t rounded = (bytes + 63) / 64 * 64 + 64;
      if (used + rounded > kBytes) throw std::runtime_error("the simulated arena is full");
      std::byte* p = arena + used;
      used += rounded;
      return {p, [self](std::byte*) {}};
    }
  };
  static std::shared_ptr<Graph>& active_graph() {
    static thread_local std::shared_ptr<Graph> graph;
    return graph;
  }
  std::shared_ptr<Graph> make_graph(MemorySpace memory) const {
    auto g = std::make_shared<Graph>();
    g->arena = static_cast<std::byte*>(std::aligned_alloc(64, Graph::kBytes));
    {
      const std::lock_guard lock(mutex_);
      regions_[g->arena] = {Graph::kBytes, memory.local_hardware_id};
    }
    g->release = [this, arena = g->arena] {
      {
        const std::lock_guard lock(mutex_);
        regions_.erase(arena);
      }
      std::free(arena);
    };
    return g;
  }

  SimulatedStream& stream_of(MemorySpace memory) const {
    const std::lock_guard lock(mutex_);
    auto& s = streams_[memory.local_hardware_id];
    if (!s) s = std::make_unique<SimulatedStream>();
    return *s;
  }

  struct Region {
    size_t bytes = 0;
    int device = -1;
  };

  // The region holding `p`, or null (the caller holds the lock).
  const Region* region_of(const void* p) const {
    const auto* b = static_cast<const std::byte*>(p);
    auto it = regions_.upper_bound(const_cast<std::byte*>(b));  // NOLINT: a key to look up
    if (it == regions_.begin()) return nullptr;
    --it;
    return b <= it->first + it->second.bytes ? &it->second : nullptr;
  }

  void violation(const std::string& what) const {
    {
      const std::lock_guard lock(mutex_);
      violations_.push_back(what);
    }
    throw std::logic_error("simulated device: " + what);
  }

  void on_device(const void* p, const char* method) const {
    bool inside = false;
    {
      const std::lock_guard lock(mutex_);
      inside = region_of(p) != nullptr;
    }
    if (!inside) violation(std::string(method) + " was given a pointer outside device memory");
  }

  void check_in(const void* p, MemorySpace memory, const char* what) const {
    bool inside = false;
    int device = -1;
    {
      const std::lock_guard lock(mutex_);
      const Region* r = region_of(p);
      inside = r != nullptr;
      if (inside) device = r->device;
    }
    const bool device_memory = memory.kind == MemorySpace::Kind::kDevice;
    if (device_memory != inside || (inside && device != memory.local_hardware_id)) {
      violation(std::string(what) + " " + memory.to_string() + " named a pointer that is " +
                (inside ? "in device:" + std::to_string(device) : "host") + " memory");
    }
  }

  const kernels::Backend& cpu_ = kernels::cpu_backend();
  bool replays_ = false;
  mutable std::mutex mutex_;
  mutable std::map<std::byte*, Region> regions_;  // by start
  mutable Counts counts_;
  mutable std::vector<std::string> violations_;
  mutable int bindings_ = 0;
  // Last, so that each stream's thread has stopped before the rest goes.
  mutable std::map<int, std::unique_ptr<SimulatedStream>> streams_;
};

}  // namespace spmd::testing
