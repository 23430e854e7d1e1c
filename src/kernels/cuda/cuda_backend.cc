#include "kernels/cuda/cuda_backend.h"

#include <fmt/format.h>

#include <string>

#include "kernels/cuda/chain.h"
#include "kernels/cuda/fill.h"
#include "kernels/cuda/gpu_scope.h"
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

[[noreturn]] void not_yet(const char* what) {
  throw Error(
      fmt::format("{} is not yet computed on GPUs (JAX's samplers are CPU-only in spmd so far); "
                  "run on CPUs (SPMD_PLATFORMS=cpu) or draw the numbers there",
                  what));
}

class CudaBackend final : public Backend {
 public:
  std::string_view platform() const override { return "gpu"; }
  MemorySpace memory(int local_hardware_id) const override {
    return MemorySpace::device(local_hardware_id);
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
  void concatenate(size_t element_size, std::span<const std::byte* const> in,
                   std::span<const Shape> shapes, int axis, std::byte* out) const override {
    cuda::concatenate(gpu(), element_size, in, shapes, axis, out);
  }

  void random_bits(RandomBits kind, const RandomBlock& block, std::byte* out) const override {
    cuda::random_bits(gpu(), kind, block, out);
  }
  void random_sample(const Sampler& sampler, const RandomBlock&, std::byte*) const override {
    not_yet(fmt::format("jax.random.{}", distribution_name(sampler.distribution)).c_str());
  }
  void random_gamma(const uint32_t*, const float*, int64_t, bool, float*) const override {
    not_yet("jax.random.gamma");
  }
  void random_poisson(const uint32_t*, const float*, int64_t, int32_t*) const override {
    not_yet("jax.random.poisson");
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
            const int32_t* indices, int64_t count, std::byte* out) const override {
    cuda::take(gpu(), element_size, in, shape, axis, indices, count, out);
  }
  void scatter_add(DType dtype, const std::byte* updates, const Shape& shape, int axis,
                   const int32_t* indices, int64_t count, std::byte* out) const override {
    cuda::scatter_add(gpu(), dtype, updates, shape, axis, indices, count, out);
  }
  void cholesky(DType, const std::byte*, int64_t, int64_t, std::byte*) const override {
    not_yet("jnp.linalg.cholesky");
  }
  void qr(DType, const std::byte*, int64_t, int64_t, int64_t, std::byte*,
          std::byte*) const override {
    not_yet("jnp.linalg.qr");
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
