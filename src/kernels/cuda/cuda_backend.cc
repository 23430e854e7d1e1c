#include "kernels/cuda/cuda_backend.h"

#include <fmt/format.h>

#include <string>

#include "kernels/cuda/call_graph.h"
#include "kernels/cuda/chain.h"
#include "kernels/cuda/device_memory.h"
#include "kernels/cuda/fill.h"
#include "kernels/cuda/gpu_scope.h"
#include "kernels/cuda/host_fallback.h"
#include "kernels/cuda/layout.h"
#include "kernels/cuda/matmul.h"
#include "kernels/cuda/ordering.h"
#include "kernels/cuda/random_bits.h"
#include "kernels/cuda/random_permute.h"
#include "kernels/cuda/reduce.h"
#include "spmd/error.h"

namespace spmd::kernels::cuda {
namespace {

GpuContext& gpu() { return GpuScope::current(); }

class CudaBackend final : public Backend {
 public:
  std::string_view platform() const override { return "gpu"; }
  MemorySpace memory(int local_hardware_id) const override {
    return MemorySpace::device(local_hardware_id);
  }
  std::shared_ptr<std::byte> allocate(MemorySpace memory, size_t bytes) const override {
    return allocate_device(memory, bytes);
  }
  void copy(const std::byte* from, MemorySpace from_memory, std::byte* to, MemorySpace to_memory,
            size_t bytes) const override {
    copy_memory(from, from_memory, to, to_memory, bytes);
  }
  void copy_pieces(MemorySpace memory, std::span<const CopyPiece> pieces) const override {
    copy_pieces_on_device(memory, pieces);
  }
  std::shared_ptr<void> bind_thread(MemorySpace memory) const override { return bind_gpu(memory); }
  void* stream(MemorySpace memory) const override { return gpu_stream(memory); }
  std::function<bool()> fence(MemorySpace memory) const override { return gpu_fence(memory); }
  void synchronize(MemorySpace memory) const override { gpu_synchronize(memory); }
  void call_queued(MemorySpace memory) const override { gpu_call_queued(memory); }
  bool replays_calls() const override { return graphs_enabled(); }
  CallRun run_call(MemorySpace memory, std::shared_ptr<void>& state,
                   std::span<const void* const> inputs, bool may_replay,
                   const std::function<void(bool)>& call) const override {
    if (!state) state = std::make_shared<CallGraph>(GpuContext::get(memory.local_hardware_id));
    switch (static_cast<CallGraph*>(state.get())->run(inputs, may_replay, call)) {
      case CallGraph::Outcome::kCaptured:
        return CallRun::kCaptured;
      case CallGraph::Outcome::kReplayed:
        return CallRun::kReplayed;
      default:
        return CallRun::kDirect;
    }
  }
  bool replay_holds(const std::shared_ptr<void>& state, const void* data) const override {
    return state && static_cast<const CallGraph*>(state.get())->holds(data);
  }

  void chain(std::span<const ChainStep> steps, std::span<const Input> inputs, std::byte* out,
             int64_t n) const override {
    run_chain(gpu(), steps, inputs, out, n);
  }
  void convert(DType from, DType to, Input a, std::byte* out, int64_t n) const override {
    const ChainStep step{ChainStep::Kind::kConvert, 0, from, to, {chain_input(0)}};
    run_chain(gpu(), {&step, 1}, {&a, 1}, out, n);
  }
  void fill(DType dtype, double value, std::byte* out, int64_t n) const override {
    cuda::fill(gpu(), dtype, value, out, n);
  }
  void iota(DType dtype, std::byte* out, int64_t n) const override {
    cuda::iota(gpu(), dtype, out, n);
  }

  void reduce(Reduce op, DType dtype, const std::byte* in, const Shape& shape, int axis,
              DType out_dtype, std::byte* out) const override {
    cuda::reduce(gpu(), op, dtype, in, shape, axis, out_dtype, out);
  }
  void argmax(DType dtype, const std::byte* in, const Shape& shape, int axis,
              std::byte* out) const override {
    cuda::argmax(gpu(), dtype, in, shape, axis, out);
  }

  void broadcast(size_t element_size, const std::byte* in, const Shape& from, std::byte* out,
                 const Shape& to) const override {
    cuda::broadcast(gpu(), element_size, in, from, out, to);
  }
  void transpose(size_t element_size, const std::byte* in, const Shape& shape,
                 std::span<const int> perm, std::byte* out) const override {
    cuda::transpose(gpu(), element_size, in, shape, perm, out);
  }
  void slice(size_t element_size, const std::byte* in, const Shape& shape,
             std::span<const int64_t> start, const Shape& extent, std::byte* out) const override {
    cuda::slice(gpu(), element_size, in, shape, start, extent, out);
  }
  void strided_slice(size_t element_size, const std::byte* in, const Shape& shape,
                     std::span<const int64_t> start, std::span<const int64_t> step,
                     const Shape& extent, std::byte* out) const override {
    cuda::strided_slice(gpu(), element_size, in, shape, start, step, extent, out);
  }
  void concatenate(size_t element_size, std::span<const std::byte* const> in,
                   std::span<const Shape> shapes, int axis, std::byte* out) const override {
    cuda::concatenate(gpu(), element_size, in, shapes, axis, out);
  }

  void random_bits(RandomBits kind, const RandomBlock& block, std::byte* out) const override {
    cuda::random_bits(gpu(), kind, block, out);
  }
  void random_sample(const Sampler& sampler, const RandomBlock& block,
                     std::byte* out) const override {
    random_sample_on_host(gpu(), sampler, block, out);
  }
  void random_gamma(const uint32_t* key, const float* alpha, int64_t n, GammaForm form,
                    float* out) const override {
    random_gamma_on_host(gpu(), key, alpha, n, form, out);
  }
  void ynn_softmax_rows(const float* x, int64_t rows, int64_t k, float* out) const override {
    ynn_softmax_rows_on_host(gpu(), x, rows, k, out);
  }
  void ynn_power_sum_rows(const float* g, int64_t rows, int64_t k, const float* p,
                          float* out) const override {
    ynn_power_sum_rows_on_host(gpu(), g, rows, k, p, out);
  }
  void random_poisson(const uint32_t* key, const float* lam, int64_t n,
                      int32_t* out) const override {
    random_poisson_on_host(gpu(), key, lam, n, out);
  }
  void random_permute(std::array<uint32_t, 2> key, size_t element_size, const std::byte* in,
                      const Shape& shape, int axis, std::byte* out) const override {
    cuda::random_permute(gpu(), key, element_size, in, shape, axis, out);
  }

  void matmul(DType dtype, MatmulShape s, const std::byte* a, const std::byte* b,
              std::byte* out) const override {
    cuda::matmul(gpu(), dtype, s, a, b, out);
  }

  void cumsum(DType dtype, const std::byte* in, const Shape& shape, int axis,
              std::byte* out) const override {
    cuda::cumsum(gpu(), dtype, in, shape, axis, out);
  }
  void cumprod(DType dtype, const std::byte* in, const Shape& shape, int axis,
               std::byte* out) const override {
    cuda::cumprod(gpu(), dtype, in, shape, axis, out);
  }
  void search_sorted(DType dtype, const std::byte* sorted, int64_t n, const std::byte* queries,
                     int64_t count, int32_t* out) const override {
    cuda::search_sorted(gpu(), dtype, sorted, n, queries, count, out);
  }
  void top_k(DType dtype, const std::byte* in, int64_t n, int64_t k, int32_t* out) const override {
    cuda::top_k(gpu(), dtype, in, n, k, out);
  }
  void take(size_t element_size, const std::byte* in, const Shape& shape, int axis,
            const int32_t* indices, int64_t count, std::byte* out,
            const std::byte* fill) const override {
    cuda::take(gpu(), element_size, in, shape, axis, indices, count, out, fill);
  }
  void scatter_add(DType dtype, const std::byte* updates, const Shape& shape, int axis,
                   const int32_t* indices, int64_t count, std::byte* out) const override {
    cuda::scatter_add(gpu(), dtype, updates, shape, axis, indices, count, out);
  }
  void scatter(ScatterCombine how, DType dtype, const std::byte* updates, const Shape& shape,
               int axis, const int32_t* indices, int64_t count, std::byte* out) const override {
    scatter_on_host(gpu(), how, dtype, updates, shape, axis, indices, count, out);
  }
  void cholesky(DType dtype, const std::byte* in, int64_t batch, int64_t n,
                std::byte* out) const override {
    cholesky_on_host(gpu(), dtype, in, batch, n, out);
  }
  void qr(DType dtype, const std::byte* in, int64_t batch, int64_t m, int64_t n, std::byte* q,
          std::byte* r) const override {
    qr_on_host(gpu(), dtype, in, batch, m, n, q, r);
  }
  void triangular_solve(DType dtype, const std::byte* a, const std::byte* b, int64_t batch,
                        int64_t m, int64_t n, TriangularSolve how, std::byte* out) const override {
    triangular_solve_on_host(gpu(), dtype, a, b, batch, m, n, how, out);
  }
  void sort(DType key_dtype, const std::byte* keys, const SortSpec& spec, const std::byte* payload,
            std::byte* out) const override {
    cuda::sort(gpu(), key_dtype, keys, spec, payload, out);
  }
};

}  // namespace

const Backend& cuda_backend() {
  static const CudaBackend backend;
  return backend;
}

}  // namespace spmd::kernels::cuda
