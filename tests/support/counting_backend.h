// A kernel backend for tests of the device seam (src/kernels/backend.h): the CPU backend's
// kernels, with every call that reaches them counted by method name. Installed under its own
// platform name it runs a program the executor is handed directly; installed as "cpu" with
// kernels::BackendOverride it stands in for the CPU backend everywhere, so an operation that
// computed without a call here went around the seam. Thread-safe: device threads share it.
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "kernels/backend.h"

namespace spmd::testing {

class CountingBackend final : public kernels::Backend {
 public:
  explicit CountingBackend(std::string platform = "counting") : platform_(std::move(platform)) {}

  // As a backend that cannot read a broadcast in place (a GPU's): the executor makes it whole.
  void refuse_broadcasts_in_place() { reads_broadcasts_ = false; }
  // Whether jit contracts products into fused multiply-adds for it (jit/contract.h): the CPU
  // backend's answer (this CPU's FMA instructions) unless a test sets its own, as a test of the
  // chains' mechanics sets no (its fused and unfused programs then round alike) and the golden
  // programs yes (the same text on every machine).
  void contract_multiply_adds(bool contracts) { contracts_ = contracts; }

  // Calls of `method` ("chain", "matmul", ...) so far.
  int calls(const std::string& method) const {
    const std::lock_guard lock(mutex_);
    const auto it = calls_.find(method);
    return it == calls_.end() ? 0 : it->second;
  }
  // Calls of every method so far.
  int calls() const {
    const std::lock_guard lock(mutex_);
    int total = 0;
    for (const auto& [method, n] : calls_) total += n;
    return total;
  }
  void reset() {
    const std::lock_guard lock(mutex_);
    calls_.clear();
  }

  std::string_view platform() const override { return platform_; }
  MemorySpace memory(int id) const override { return cpu_.memory(id); }

#define SPMD_COUNTED(method, params, args) \
  void method params const override {      \
    count(#method);                        \
    cpu_.method args;                      \
  }
  SPMD_COUNTED(chain,
               (std::span<const kernels::ChainStep> s, std::span<const kernels::Input> in,
                std::byte* o, int64_t n),
               (s, in, o, n))
  bool reads_broadcasts() const override { return reads_broadcasts_ && cpu_.reads_broadcasts(); }
  bool contracts_multiply_add() const override { return contracts_; }
  bool chain_reduce(std::span<const kernels::ChainStep> s, std::span<const kernels::Input> in,
                    int64_t outer, int64_t extent, int64_t inner, kernels::Reduce op,
                    std::byte* o) const override {
    count("chain_reduce");
    return cpu_.chain_reduce(s, in, outer, extent, inner, op, o);
  }
  SPMD_COUNTED(convert, (DType f, DType t, kernels::Input a, std::byte* o, int64_t n),
               (f, t, a, o, n))
  SPMD_COUNTED(fill, (DType t, double v, std::byte* o, int64_t n), (t, v, o, n))
  SPMD_COUNTED(iota, (DType t, std::byte* o, int64_t n), (t, o, n))
  SPMD_COUNTED(reduce,
               (kernels::Reduce op, DType t, const std::byte* in, const Shape& s, int axis,
                DType ot, std::byte* o),
               (op, t, in, s, axis, ot, o))
  SPMD_COUNTED(argmax, (DType t, const std::byte* in, const Shape& s, int axis, std::byte* o),
               (t, in, s, axis, o))
  SPMD_COUNTED(broadcast,
               (size_t w, const std::byte* in, const Shape& f, std::byte* o, const Shape& to),
               (w, in, f, o, to))
  SPMD_COUNTED(transpose,
               (size_t w, const std::byte* in, const Shape& s, std::span<const int> p,
                std::byte* o),
               (w, in, s, p, o))
  SPMD_COUNTED(slice,
               (size_t w, const std::byte* in, const Shape& s, std::span<const int64_t> st,
                const Shape& e, std::byte* o),
               (w, in, s, st, e, o))
  SPMD_COUNTED(strided_slice,
               (size_t w, const std::byte* in, const Shape& s, std::span<const int64_t> st,
                std::span<const int64_t> sp, const Shape& e, std::byte* o),
               (w, in, s, st, sp, e, o))
  SPMD_COUNTED(concatenate,
               (size_t w, std::span<const std::byte* const> in, std::span<const Shape> s, int axis,
                std::byte* o),
               (w, in, s, axis, o))
  SPMD_COUNTED(matmul,
               (DType t, kernels::MatmulShape s, const std::byte* a, const std::byte* b,
                std::byte* o),
               (t, s, a, b, o))
  SPMD_COUNTED(random_bits, (kernels::RandomBits k, const kernels::RandomBlock& b, std::byte* o),
               (k, b, o))
  SPMD_COUNTED(random_sample,
               (const kernels::Sampler& s, const kernels::RandomBlock& b, std::byte* o), (s, b, o))
  SPMD_COUNTED(random_permute,
               (std::array<uint32_t, 2> k, size_t w, const std::byte* in, const Shape& s, int axis,
                std::byte* o),
               (k, w, in, s, axis, o))
  SPMD_COUNTED(random_gamma,
               (const uint32_t* k, const float* a, int64_t n, kernels::GammaForm f, float* o),
               (k, a, n, f, o))
  SPMD_COUNTED(ynn_softmax_rows, (const float* x, int64_t rows, int64_t k, float* o),
               (x, rows, k, o))
  SPMD_COUNTED(ynn_power_sum_rows,
               (const float* g, int64_t rows, int64_t k, const float* p, float* o),
               (g, rows, k, p, o))
  SPMD_COUNTED(random_poisson, (const uint32_t* k, const float* l, int64_t n, int32_t* o),
               (k, l, n, o))
  SPMD_COUNTED(cumsum, (DType t, const std::byte* in, const Shape& s, int axis, std::byte* o),
               (t, in, s, axis, o))
  SPMD_COUNTED(cumprod, (DType t, const std::byte* in, const Shape& s, int axis, std::byte* o),
               (t, in, s, axis, o))
  SPMD_COUNTED(search_sorted,
               (DType t, const std::byte* a, int64_t n, const std::byte* q, int64_t c, int32_t* o),
               (t, a, n, q, c, o))
  SPMD_COUNTED(top_k, (DType t, const std::byte* in, int64_t n, int64_t k, int32_t* o),
               (t, in, n, k, o))
  SPMD_COUNTED(take,
               (size_t w, const std::byte* in, const Shape& s, int axis, const int32_t* i,
                int64_t c, std::byte* o, const std::byte* f),
               (w, in, s, axis, i, c, o, f))
  SPMD_COUNTED(scatter_add,
               (DType t, const std::byte* u, const Shape& s, int axis, const int32_t* i, int64_t c,
                std::byte* o),
               (t, u, s, axis, i, c, o))
  SPMD_COUNTED(scatter,
               (kernels::ScatterCombine h, DType t, const std::byte* u, const Shape& s, int axis,
                const int32_t* i, int64_t c, std::byte* o),
               (h, t, u, s, axis, i, c, o))
  SPMD_COUNTED(cholesky, (DType t, const std::byte* in, int64_t b, int64_t n, std::byte* o),
               (t, in, b, n, o))
  SPMD_COUNTED(qr,
               (DType t, const std::byte* in, int64_t b, int64_t m, int64_t n, std::byte* q,
                std::byte* r),
               (t, in, b, m, n, q, r))
  SPMD_COUNTED(triangular_solve,
               (DType t, const std::byte* a, const std::byte* b, int64_t batch, int64_t m,
                int64_t n, kernels::TriangularSolve how, std::byte* o),
               (t, a, b, batch, m, n, how, o))
  SPMD_COUNTED(sort,
               (DType t, const std::byte* k, const kernels::SortSpec& s, const std::byte* p,
                std::byte* o),
               (t, k, s, p, o))
#undef SPMD_COUNTED

 private:
  void count(const char* method) const {
    const std::lock_guard lock(mutex_);
    ++calls_[method];
  }

  std::string platform_;
  const kernels::Backend& cpu_ = kernels::cpu_backend();
  bool reads_broadcasts_ = true;
  bool contracts_ = cpu_.contracts_multiply_add();
  mutable std::mutex mutex_;
  mutable std::map<std::string, int> calls_;
};

}  // namespace spmd::testing
