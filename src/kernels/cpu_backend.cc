// The CPU backend: the device seam (backend.h) over this folder's Eigen and OpenBLAS kernels.
#include <Eigen/Core>
#include <array>
#include <string>

#include "kernels/backend.h"
#include "kernels/float_arithmetic.h"
#include "kernels/layout.h"
#include "kernels/ynn_reduce.h"
#include "spmd/error.h"

namespace spmd::kernels {
namespace {

class CpuBackend final : public Backend {
 public:
  std::string_view platform() const override { return "cpu"; }
  MemorySpace memory(int /*local_hardware_id*/) const override { return MemorySpace::host(); }

  void chain(std::span<const ChainStep> steps, std::span<const Input> inputs, std::byte* out,
             int64_t n) const override {
    run_chain(steps, inputs, out, n);
  }
  bool reads_broadcasts() const override { return true; }
  bool contracts_multiply_add() const override { return cpu_has_fma(); }
  bool chain_reduce(std::span<const ChainStep> steps, std::span<const Input> inputs, int64_t outer,
                    int64_t extent, int64_t inner, Reduce op, std::byte* out) const override {
    run_chain_reduce_axis(steps, inputs, outer, extent, inner, op, out);
    return true;
  }
  void convert(DType from, DType to, Input a, std::byte* out, int64_t n) const override {
    kernels::convert(from, to, a, out, n);
  }
  void fill(DType dtype, double value, std::byte* out, int64_t n) const override {
    if (n <= 0) return;
    std::array<std::byte, 16> element{};  // the value converted once (every dtype fits)
    kernels::convert(DType::kFloat64, dtype, {reinterpret_cast<const std::byte*>(&value), 1},
                     element.data(), 1);
    kernels::fill_elements(dtype_size(dtype), element.data(), n, out);
  }
  void iota(DType dtype, std::byte* out, int64_t n) const override {
    const Eigen::ArrayXd values = Eigen::ArrayXd::LinSpaced(n, 0, static_cast<double>(n - 1));
    kernels::convert(DType::kFloat64, dtype, {reinterpret_cast<const std::byte*>(values.data()), n},
                     out, n);
  }

  void reduce(Reduce op, DType dtype, const std::byte* in, const Shape& shape, int axis,
              DType out_dtype, std::byte* out) const override {
    kernels::reduce(op, dtype, in, shape, axis, out_dtype, out);
  }
  void argmax(DType dtype, const std::byte* in, const Shape& shape, int axis,
              std::byte* out) const override {
    kernels::argmax(dtype, in, shape, axis, out);
  }

  void broadcast(size_t element_size, const std::byte* in, const Shape& from, std::byte* out,
                 const Shape& to) const override {
    kernels::broadcast(element_size, in, from, out, to);
  }
  void transpose(size_t element_size, const std::byte* in, const Shape& shape,
                 std::span<const int> perm, std::byte* out) const override {
    kernels::transpose(element_size, in, shape, perm, out);
  }
  void slice(size_t element_size, const std::byte* in, const Shape& shape,
             std::span<const int64_t> start, const Shape& extent, std::byte* out) const override {
    kernels::slice(element_size, in, shape, start, extent, out);
  }
  void strided_slice(size_t element_size, const std::byte* in, const Shape& shape,
                     std::span<const int64_t> start, std::span<const int64_t> step,
                     const Shape& extent, std::byte* out) const override {
    kernels::strided_slice(element_size, in, shape, start, step, extent, out);
  }
  void concatenate(size_t element_size, std::span<const std::byte* const> in,
                   std::span<const Shape> shapes, int axis, std::byte* out) const override {
    kernels::concatenate(element_size, in, shapes, axis, out);
  }

  void random_bits(RandomBits kind, const RandomBlock& block, std::byte* out) const override {
    kernels::random_bits(kind, block, out);
  }
  void random_sample(const Sampler& sampler, const RandomBlock& block,
                     std::byte* out) const override {
    kernels::random_sample(sampler, block, out);
  }
  void random_permute(std::array<uint32_t, 2> key, size_t element_size, const std::byte* in,
                      const Shape& shape, int axis, std::byte* out) const override {
    kernels::random_permute(key, element_size, in, shape, axis, out);
  }

  void random_gamma(const uint32_t* key, const float* alpha, int64_t n, GammaForm form,
                    float* out) const override {
    kernels::random_gamma({key[0], key[1]}, alpha, n, form, out);
  }

  void ynn_softmax_rows(const float* x, int64_t rows, int64_t k, float* out) const override {
    kernels::ynn_softmax_rows(x, rows, k, out);
  }

  void ynn_power_sum_rows(const float* g, int64_t rows, int64_t k, const float* p,
                          float* out) const override {
    kernels::ynn_power_sum_rows(g, rows, k, *p, out);
  }

  void random_poisson(const uint32_t* key, const float* lam, int64_t n,
                      int32_t* out) const override {
    kernels::random_poisson({key[0], key[1]}, lam, n, out);
  }

  void matmul(DType dtype, MatmulShape s, const std::byte* a, const std::byte* b,
              std::byte* out) const override {
    kernels::matmul(dtype, s, a, b, out);
  }

  void cumsum(DType dtype, const std::byte* in, const Shape& shape, int axis,
              std::byte* out) const override {
    kernels::cumsum(dtype, in, shape, axis, out);
  }
  void cumprod(DType dtype, const std::byte* in, const Shape& shape, int axis,
               std::byte* out) const override {
    kernels::cumprod(dtype, in, shape, axis, out);
  }
  void search_sorted(DType dtype, const std::byte* sorted, int64_t n, const std::byte* queries,
                     int64_t count, int32_t* out) const override {
    kernels::search_sorted(dtype, sorted, n, queries, count, out);
  }
  void top_k(DType dtype, const std::byte* in, int64_t n, int64_t k, int32_t* out) const override {
    kernels::top_k(dtype, in, n, k, out);
  }
  void take(size_t element_size, const std::byte* in, const Shape& shape, int axis,
            const int32_t* indices, int64_t count, std::byte* out,
            const std::byte* fill) const override {
    kernels::take(element_size, in, shape, axis, indices, count, out, fill);
  }
  void scatter_add(DType dtype, const std::byte* updates, const Shape& shape, int axis,
                   const int32_t* indices, int64_t count, std::byte* out) const override {
    kernels::scatter_add(dtype, updates, shape, axis, indices, count, out);
  }
  void scatter(ScatterCombine how, DType dtype, const std::byte* updates, const Shape& shape,
               int axis, const int32_t* indices, int64_t count, std::byte* out) const override {
    kernels::scatter(how, dtype, updates, shape, axis, indices, count, out);
  }
  void cholesky(DType dtype, const std::byte* in, int64_t batch, int64_t n,
                std::byte* out) const override {
    kernels::cholesky(dtype, in, batch, n, out);
  }
  void qr(DType dtype, const std::byte* in, int64_t batch, int64_t m, int64_t n, std::byte* q,
          std::byte* r) const override {
    kernels::qr(dtype, in, batch, m, n, q, r);
  }
  void triangular_solve(DType dtype, const std::byte* a, const std::byte* b, int64_t batch,
                        int64_t m, int64_t n, TriangularSolve how, std::byte* out) const override {
    kernels::triangular_solve(dtype, a, b, batch, m, n, how, out);
  }
  void sort(DType key_dtype, const std::byte* keys, const SortSpec& spec, const std::byte* payload,
            std::byte* out) const override {
    kernels::sort(key_dtype, keys, spec, payload, out);
  }
};

}  // namespace

const Backend& cpu_backend() {
  static const CpuBackend backend;
  return backend;
}

}  // namespace spmd::kernels
