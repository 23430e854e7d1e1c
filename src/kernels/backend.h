// The device seam: every kernel the jit executor calls, behind one interface per kind of device.
//
// A backend computes on buffers in its own memory space (memory_space.h); the executor takes the
// backend of the devices it runs on and never calls a kernel function directly, so a second kind
// of device (CUDA: issue "GPUs") is a second implementation of this class, not a branch at every
// call. Each method's contract is the CPU kernel's of the same name (elementwise.h, reduce.h,
// layout.h, matmul.h, random_bits.h, random_samplers.h, ordering.h, scatter.h; chain() is
// chain.h's run_chain); pointers
// are into memory() and shapes are trusted (checked at trace time). Implementations are stateless
// and thread-safe: every device thread calls the same backend.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string_view>

#include "kernels/chain.h"
#include "kernels/elementwise.h"
#include "kernels/linalg.h"
#include "kernels/matmul.h"
#include "kernels/ordering.h"
#include "kernels/random_bits.h"
#include "kernels/random_samplers.h"
#include "kernels/reduce.h"
#include "kernels/scatter.h"
#include "spmd/dtype.h"
#include "spmd/memory_space.h"
#include "spmd/shape.h"

namespace spmd::kernels {

class Backend {
 public:
  virtual ~Backend() = default;

  // The platform of the devices it serves, as Device::platform() says it ("cpu").
  virtual std::string_view platform() const = 0;
  // The memory its kernels read and write for the device with `local_hardware_id`.
  virtual MemorySpace memory(int local_hardware_id) const = 0;

  // Device memory (a backend whose memory() is not the host's; spmd::Block keeps the result).
  // `bytes` bytes of `memory`, given back when the last owner lets go, once the work already
  // queued on that device is done with them. Host memory is never asked for here (Block makes
  // it): the default, a host-memory backend's, throws InvalidArgument.
  virtual std::shared_ptr<std::byte> allocate(MemorySpace memory, size_t bytes) const;
  // Copies `bytes` bytes from `from` in `from_memory` to `to` in `to_memory`, each host memory
  // or one of this backend's devices'. Returns once `from` may change; a host destination then
  // holds the bytes, and a device's holds them for every later call of this backend on it (and
  // a device's error reported by work queued before is thrown here, where the host waits). The
  // default copies host to host and throws InvalidArgument for device memory.
  virtual void copy(const std::byte* from, MemorySpace from_memory, std::byte* to,
                    MemorySpace to_memory, size_t bytes) const;
  // Copies within the memory `memory`, each piece's `bytes` from `from` to `to` (none
  // overlapping another's destination), with copy()'s contract for each, in one go where the
  // backend can: a GPU's queues them as one batch, which costs the host one call instead of one
  // a piece. A piece of no bytes copies nothing. The default copies the others one by one.
  struct CopyPiece {
    const std::byte* from = nullptr;
    std::byte* to = nullptr;
    size_t bytes = 0;
  };
  virtual void copy_pieces(MemorySpace memory, std::span<const CopyPiece> pieces) const {
    for (const CopyPiece& p : pieces) {
      if (p.bytes > 0) copy(p.from, memory, p.to, memory, p.bytes);
    }
  }
  // Makes the calling thread compute on the device of `memory` until the scope ends, for a
  // backend whose kernels take no device (a GPU's: each device thread binds its GPU); the
  // default does nothing. Scopes nest per thread.
  virtual std::shared_ptr<void> bind_thread(MemorySpace /*memory*/) const { return nullptr; }
  // The queue the device of `memory` orders its work on (a GPU's cudaStream_t), for a library
  // that queues its own work there (a device collective, comm/device_collectives.h); null for a
  // backend whose kernels finish before they return, as the CPU's do.
  virtual void* stream(MemorySpace /*memory*/) const { return nullptr; }
  // A probe that says, without blocking, whether the work queued on the device of `memory`
  // before this call (kernels, copies, a collective queued on stream()) has finished: a GPU's
  // records an event on its stream and asks after it. A faulted device's probe says finished,
  // and the fault is thrown where the host next waits (copy). The default, for a backend whose
  // work is done when a call returns, always says finished.
  virtual std::function<bool()> fence(MemorySpace /*memory*/) const {
    return [] { return true; };
  }
  // Waits until the work queued on the device of `memory` has finished, and throws the error a
  // kernel reported there (a GPU's integer division by zero, a fault): where jit's call ends
  // with its outputs left in device memory. The default, for a backend whose work is done when
  // a call returns, does nothing.
  virtual void synchronize(MemorySpace /*memory*/) const {}
  // The end of one jit call on the device of `memory`, its work queued: JAX's asynchronous
  // dispatch, bounded. A GPU's returns at once while few enough calls are unfinished there, else
  // waits for the oldest (kernels/cuda/calls_in_flight.h), so the host prepares the next call
  // while the device runs this one; a fault of the work it waited for is thrown here, and the
  // rest where the host next waits (synchronize, copy to the host). The default, for a backend
  // whose work is done when a call returns, does nothing.
  virtual void call_queued(MemorySpace /*memory*/) const {}
  // Runs one jit call's work on the device of `memory` so that later calls of the same program
  // cost the host less: a GPU's captures it into a CUDA graph and replays that
  // (kernels/cuda/call_graph.h). `state` is the caller's slot for one program on one device,
  // null at first; the backend keeps there what it needs between calls. `call` queues the work
  // and fills the caller's results; it is told whether it may run again (a failed capture is
  // followed by a direct run), and then must leave its inputs as they were. `inputs` are the
  // call's input buffers; with `may_replay` (the caller knows where the last captured call left
  // each result) a call whose inputs are those of a kept graph is answered by launching that
  // graph without running `call` (kReplayed). Afterwards every result block whose data
  // replay_holds() says the backend reuses for the next call must be copied out by the caller.
  // The default runs `call(false)`.
  enum class CallRun { kDirect, kCaptured, kReplayed };
  // Whether run_call does more than run the call (the CPU's does not: its callers skip it).
  virtual bool replays_calls() const { return false; }
  virtual CallRun run_call(MemorySpace /*memory*/, std::shared_ptr<void>& /*state*/,
                           std::span<const void* const> /*inputs*/, bool /*may_replay*/,
                           const std::function<void(bool)>& call) const {
    call(false);
    return CallRun::kDirect;
  }
  virtual bool replay_holds(const std::shared_ptr<void>& /*state*/, const void* /*data*/) const {
    return false;
  }

  // Element-wise (chain.h): one or more element-wise steps over n elements, every input holding
  // n elements or one, the last step's result written to `out`. One step is one kernel call; a
  // longer chain is a fused chain of a jit program, run in one pass (the CPU's block by block; a
  // GPU's would be one generated kernel).
  virtual void chain(std::span<const ChainStep> steps, std::span<const Input> inputs,
                     std::byte* out, int64_t n) const = 0;
  // Whether chain() and chain_reduce() read a broadcast in place (chain.h: an Input with fewer
  // elements than the chain's and more than one, or a `repeat`); where not, the caller makes the
  // broadcast whole first.
  virtual bool reads_broadcasts() const { return false; }
  // Whether XLA's code for these devices contracts a float product and the one sum or difference
  // reading it, in one fusion, into a fused multiply-add (LLVM's contraction, which XLA always
  // allows): then jit's chains do so too (jit/contract.h), so that they round as JAX's jit does.
  // The default says no; the CPU's says so where the CPU has the instruction (cpu_has_fma), a
  // GPU's always.
  virtual bool contracts_multiply_add() const { return false; }
  // A chain feeding a reduction of one axis of its result (outer × extent × inner elements, the
  // axis the extent; inner = 1 for the last), in one pass (chain.h: run_chain_reduce_axis);
  // returns false, having done nothing, where this backend does not fuse them: the caller then
  // runs the chain and the reduction apart.
  virtual bool chain_reduce(std::span<const ChainStep> /*steps*/, std::span<const Input> /*inputs*/,
                            int64_t /*outer*/, int64_t /*extent*/, int64_t /*inner*/, Reduce /*op*/,
                            std::byte* /*out*/) const {
    return false;
  }
  virtual void convert(DType from, DType to, Input a, std::byte* out, int64_t n) const = 0;
  // out[i] = value (converted to dtype), for n elements.
  virtual void fill(DType dtype, double value, std::byte* out, int64_t n) const = 0;
  // out[i] = i (converted to dtype), for n elements.
  virtual void iota(DType dtype, std::byte* out, int64_t n) const = 0;

  // Reductions along one axis (reduce.h).
  virtual void reduce(Reduce op, DType dtype, const std::byte* in, const Shape& shape, int axis,
                      DType out_dtype, std::byte* out) const = 0;
  virtual void argmax(DType dtype, const std::byte* in, const Shape& shape, int axis,
                      std::byte* out) const = 0;

  // Layout changes (layout.h): element size only, no arithmetic.
  virtual void broadcast(size_t element_size, const std::byte* in, const Shape& from,
                         std::byte* out, const Shape& to) const = 0;
  virtual void transpose(size_t element_size, const std::byte* in, const Shape& shape,
                         std::span<const int> perm, std::byte* out) const = 0;
  virtual void slice(size_t element_size, const std::byte* in, const Shape& shape,
                     std::span<const int64_t> start, const Shape& extent, std::byte* out) const = 0;
  virtual void strided_slice(size_t element_size, const std::byte* in, const Shape& shape,
                             std::span<const int64_t> start, std::span<const int64_t> step,
                             const Shape& extent, std::byte* out) const = 0;
  virtual void concatenate(size_t element_size, std::span<const std::byte* const> in,
                           std::span<const Shape> shapes, int axis, std::byte* out) const = 0;

  // Counter-based random bits of one block of an array (random_bits.h).
  virtual void random_bits(RandomBits kind, const RandomBlock& block, std::byte* out) const = 0;
  // One of JAX's distributions over those bits (random_samplers.h).
  virtual void random_sample(const Sampler& sampler, const RandomBlock& block,
                             std::byte* out) const = 0;
  virtual void random_permute(std::array<uint32_t, 2> key, size_t element_size, const std::byte* in,
                              const Shape& shape, int axis, std::byte* out) const = 0;
  // random_samplers.h's random_gamma; `key` (two words), `alpha` and `out` in the backend's memory.
  virtual void random_gamma(const uint32_t* key, const float* alpha, int64_t n, GammaForm form,
                            float* out) const = 0;
  // ynn_reduce.h's ynn_softmax_rows and ynn_power_sum_rows; every pointer (`p` one float) in the
  // backend's memory.
  virtual void ynn_softmax_rows(const float* x, int64_t rows, int64_t k, float* out) const = 0;
  virtual void ynn_power_sum_rows(const float* g, int64_t rows, int64_t k, const float* p,
                                  float* out) const = 0;
  // random_samplers.h's random_poisson, likewise.
  virtual void random_poisson(const uint32_t* key, const float* lam, int64_t n,
                              int32_t* out) const = 0;

  // Batched matrix products (matmul.h).
  virtual void matmul(DType dtype, MatmulShape s, const std::byte* a, const std::byte* b,
                      std::byte* out) const = 0;

  // Order-dependent kernels in JAX's order (ordering.h).
  virtual void cumsum(DType dtype, const std::byte* in, const Shape& shape, int axis,
                      std::byte* out) const = 0;
  virtual void cumprod(DType dtype, const std::byte* in, const Shape& shape, int axis,
                       std::byte* out) const = 0;
  virtual void search_sorted(DType dtype, const std::byte* sorted, int64_t n,
                             const std::byte* queries, int64_t count, int32_t* out) const = 0;
  virtual void top_k(DType dtype, const std::byte* in, int64_t n, int64_t k,
                     int32_t* out) const = 0;
  // `fill`: nullptr (an index outside the axis is clamped) or one element in this backend's
  // memory (such an index gives a row of it).
  virtual void take(size_t element_size, const std::byte* in, const Shape& shape, int axis,
                    const int32_t* indices, int64_t count, std::byte* out,
                    const std::byte* fill) const = 0;
  virtual void scatter_add(DType dtype, const std::byte* updates, const Shape& shape, int axis,
                           const int32_t* indices, int64_t count, std::byte* out) const = 0;
  // scatter.h's scatter: `out` holds the operand on entry.
  virtual void scatter(ScatterCombine how, DType dtype, const std::byte* updates,
                       const Shape& shape, int axis, const int32_t* indices, int64_t count,
                       std::byte* out) const = 0;
  // Factorizations (linalg.h).
  virtual void cholesky(DType dtype, const std::byte* in, int64_t batch, int64_t n,
                        std::byte* out) const = 0;
  virtual void qr(DType dtype, const std::byte* in, int64_t batch, int64_t m, int64_t n,
                  std::byte* q, std::byte* r) const = 0;
  virtual void triangular_solve(DType dtype, const std::byte* a, const std::byte* b, int64_t batch,
                                int64_t m, int64_t n, TriangularSolve how,
                                std::byte* out) const = 0;
  virtual void sort(DType key_dtype, const std::byte* keys, const SortSpec& spec,
                    const std::byte* payload, std::byte* out) const = 0;
};

// Host memory, Eigen 3.4, OpenBLAS and Random123: the kernels of elementwise.h, reduce.h,
// layout.h, matmul.h, random_bits.h and random_samplers.h.
const Backend& cpu_backend();

// The backend of the devices of `platform`; throws InvalidArgument naming the platform when this
// build has none for it.
const Backend& backend_for(std::string_view platform);

// The backend whose kernels read and write `memory`: host memory is the CPU backend's, a
// device's the registered backend whose memory() it is. Throws InvalidArgument for a device
// memory no backend here serves.
const Backend& backend_of(MemorySpace memory);

// Makes `backend` the backend of its platform (backend_for) and of its devices' memory
// (backend_of): how a backend built beside libspmd joins it, as a JAX PJRT plugin does (the
// CUDA backend of libspmd_cuda, when the runtime loads it: runtime/platform_plugin.h).
// `backend` lives until the process ends. Throws InvalidArgument for "cpu" or a platform that
// already has a backend.
void register_backend(const Backend& backend);

// While it lives, backend_for("cpu") is `backend` (whose platform() must say "cpu"), and so is
// backend_of for the memory it computes in (host memory, or device memory a test backend
// simulates on the host); the one before comes back when it ends. For tests: a backend that
// counts or checks the calls reaching it shows that nothing goes around the seam. Install and
// remove it when no computation runs; overrides nest, the last one made ending first. `backend`
// must outlive it, and every block made in its memory: an Array's shards, and the constants a
// jitted function keeps (jit/execute.h), so declare a test's backend before its jitted functions.
class BackendOverride {
 public:
  explicit BackendOverride(const Backend& backend);
  ~BackendOverride();
  BackendOverride(const BackendOverride&) = delete;
  BackendOverride& operator=(const BackendOverride&) = delete;

 private:
  const Backend* previous_;
};

}  // namespace spmd::kernels
