#include "jit/ops/gemm_plan.h"

#include <climits>
#include <optional>
#include <utility>
#include <vector>

namespace spmd::compiler {
namespace {

using Sizes = std::map<char, int64_t>;
using Strides = std::map<char, int64_t>;

// A dimension of one element: any stride describes it.
constexpr int64_t kAnyStride = -1;

// Each letter's stride in a row-major array of `letters`.
Strides strides_of(const std::string& letters, const Sizes& sizes) {
  Strides strides;
  int64_t step = 1;
  for (auto c = letters.rbegin(); c != letters.rend(); ++c) {
    strides[*c] = step;
    step *= sizes.at(*c);
  }
  return strides;
}

// The stride of `group`'s letters flattened in that order into one dimension (kAnyStride where
// it has one element), or nothing where they are not consecutive in memory in that order.
std::optional<int64_t> merged(const std::string& group, const Strides& strides,
                              const Sizes& sizes) {
  int64_t stride = kAnyStride, next = 0;
  for (auto c = group.rbegin(); c != group.rend(); ++c) {
    const int64_t size = sizes.at(*c);
    if (size == 1) continue;
    if (stride == kAnyStride) {
      stride = strides.at(*c);
      next = stride * size;
    } else if (strides.at(*c) == next) {
      next *= size;
    } else {
      return std::nullopt;
    }
  }
  return stride;
}

int64_t product(const std::string& letters, const Sizes& sizes) {
  int64_t n = 1;
  for (char c : letters) n *= sizes.at(c);
  return n;
}

// A (rows × cols) matrix as it lies: columns contiguous (rows `ld` apart), or rows contiguous
// (transposed: stored as cols × rows, columns `ld` apart).
struct Matrix {
  bool transposed = false;
  int64_t ld = 0;
};

std::optional<Matrix> matrix_of(const std::string& rows, const std::string& cols,
                                const Strides& strides, const Sizes& sizes) {
  const std::optional<int64_t> r = merged(rows, strides, sizes), c = merged(cols, strides, sizes);
  if (!r || !c) return std::nullopt;
  std::optional<Matrix> m;
  if (*c == 1 || *c == kAnyStride) {
    m = Matrix{false, *r == kAnyStride ? std::max<int64_t>(product(cols, sizes), 1) : *r};
  } else if (*r == 1 || *r == kAnyStride) {
    m = Matrix{true, *c == kAnyStride ? std::max<int64_t>(product(rows, sizes), 1) : *c};
  }
  if (m && m->ld > INT_MAX) return std::nullopt;  // past BLAS's int: copied instead
  return m;
}

// The batch letters' dimensions, size-one letters dropped and neighbours that are consecutive in
// all three arrays merged.
std::vector<kernels::MatmulBatchDim> batch_dims(const std::string& batch, const Strides& a,
                                                const Strides& b, const Strides& out,
                                                const Sizes& sizes) {
  std::vector<kernels::MatmulBatchDim> dims;
  for (char c : batch) {
    const kernels::MatmulBatchDim d{sizes.at(c), a.at(c), b.at(c), out.at(c)};
    if (d.size == 1) continue;
    if (!dims.empty()) {
      kernels::MatmulBatchDim& outer = dims.back();
      if (outer.a == d.a * d.size && outer.b == d.b * d.size && outer.out == d.out * d.size) {
        outer = {outer.size * d.size, d.a, d.b, d.out};
        continue;
      }
    }
    dims.push_back(d);
  }
  return dims;
}

// Every array in matrix order, packed: the plan where a dimension is empty.
GemmPlan packed_plan(const std::string& lhs, const std::string& rhs, const std::string& out,
                     const ContractionLetters& c, const Sizes& sizes) {
  GemmPlan plan;
  plan.shape = {.batch = product(c.batch, sizes),
                .m = product(c.lhs_free, sizes),
                .k = product(c.contracting, sizes),
                .n = product(c.rhs_free, sizes)};
  plan.arrange_lhs = lhs != lhs_matrix_order(c);
  plan.arrange_rhs = rhs != rhs_matrix_order(c);
  plan.arrange_out = out != product_order(c);
  return plan;
}

}  // namespace

std::string lhs_matrix_order(const ContractionLetters& c) {
  return c.batch + c.lhs_free + c.contracting;
}
std::string rhs_matrix_order(const ContractionLetters& c) {
  return c.batch + c.contracting + c.rhs_free;
}
std::string product_order(const ContractionLetters& c) { return c.batch + c.lhs_free + c.rhs_free; }

GemmPlan plan_gemm(const std::string& lhs, const std::string& rhs, const std::string& out,
                   const ContractionLetters& c, const Sizes& sizes) {
  for (const auto& [letter, size] : sizes) {
    if (size == 0) return packed_plan(lhs, rhs, out, c, sizes);
  }
  GemmPlan plan;
  // Each operand in place where it can be read so, else copied into matrix order.
  Strides ls = strides_of(lhs, sizes), rs = strides_of(rhs, sizes), os = strides_of(out, sizes);
  std::optional<Matrix> a = matrix_of(c.lhs_free, c.contracting, ls, sizes);
  if (!a) {
    plan.arrange_lhs = true;
    ls = strides_of(lhs_matrix_order(c), sizes);
    a = matrix_of(c.lhs_free, c.contracting, ls, sizes);
  }
  std::optional<Matrix> b = matrix_of(c.contracting, c.rhs_free, rs, sizes);
  if (!b) {
    plan.arrange_rhs = true;
    rs = strides_of(rhs_matrix_order(c), sizes);
    b = matrix_of(c.contracting, c.rhs_free, rs, sizes);
  }
  std::optional<Matrix> z = matrix_of(c.lhs_free, c.rhs_free, os, sizes);
  if (!z) {
    plan.arrange_out = true;
    os = strides_of(product_order(c), sizes);
    z = matrix_of(c.lhs_free, c.rhs_free, os, sizes);
  }
  if (!a || !b || !z) return packed_plan(lhs, rhs, out, c, sizes);  // a leading dimension past int
  const int64_t batch = product(c.batch, sizes), m = product(c.lhs_free, sizes),
                k = product(c.contracting, sizes), n = product(c.rhs_free, sizes);
  plan.swap = z->transposed;
  if (!plan.swap) {
    plan.shape = {.batch = batch,
                  .m = m,
                  .k = k,
                  .n = n,
                  .transpose_a = a->transposed,
                  .transpose_b = b->transposed,
                  .lda = a->ld,
                  .ldb = b->ld,
                  .ldc = z->ld,
                  .batch_dims = batch_dims(c.batch, ls, rs, os, sizes)};
  } else {  // outᵀ (n × m) = rhsᵀ (n × k) · lhsᵀ (k × m): a stored matrix read the other way
    plan.shape = {.batch = batch,
                  .m = n,
                  .k = k,
                  .n = m,
                  .transpose_a = !b->transposed,
                  .transpose_b = !a->transposed,
                  .lda = b->ld,
                  .ldb = a->ld,
                  .ldc = z->ld,
                  .batch_dims = batch_dims(c.batch, rs, ls, os, sizes)};
  }
  return plan;
}

}  // namespace spmd::compiler
