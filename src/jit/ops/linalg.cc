// The linear-algebra family: "cholesky" and "qr" of the matrices in the last two dimensions of a
// float32 or float64 operand, and "triangular_solve" of two such operands (kernels/linalg.h).
// The leading (batch) dimensions keep their split; each matrix is whole on its device.
// Derivatives: JAX's rules transposed, for all three.
#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "jit/batching.h"
#include "jit/lax.h"
#include "jit/op_registry.h"
#include "jit/operation.h"
#include "jit/partitioner.h"
#include "jit/program.h"
#include "spmd/error.h"

namespace spmd::compiler {

using kernels::Binary;

// "cholesky": each n×n matrix's lower Cholesky factor (NaN on and below the diagonal of one
// not positive definite).
// "qr": each m×n matrix's reduced Q (m×k) or, with `r`, its R (k×n), k = min(m, n).
class FactorizationOp final : public Operation {
 public:
  enum class Kind : uint8_t { kCholesky, kQ, kR };
  explicit FactorizationOp(Kind kind) : kind(kind) {}
  const Kind kind;

  std::string name() const override { return kind == Kind::kCholesky ? "cholesky" : "qr"; }
  std::string attributes() const override;  // qr's "r=1"
  ValueType result_type(std::span<const ValueType> operands) const override;
  void partition(Partitioner& p, int value, const Op& op) const override;
  Block run(const KernelContext& device, const Step& step,
            std::span<const Block> in) const override;
  // The kernels take leading batch dimensions: the slices become one more.
  Batched batch(const Op& op, std::span<const Batched> operands, int64_t size) const override;
  // cholesky's: JAX's JVP, L̇ = L φ(L⁻¹ Σ̇ L⁻ᵀ) with φ the lower triangle and half the diagonal,
  // transposed: Σ̄ = L⁻ᵀ φ(Lᵀ Ḡ) L⁻¹, by two triangular solves in the transposed order.
  Cotangents vjp(const Op& op, const Tensor& result, std::span<const Tensor> operands,
                 const Tensor& g) const override;

 private:
  // qr's (Q's or R's, as `kind` says): JAX's JVP transposed, thin (m ≥ n) and wide alike.
  Cotangents qr_vjp(const Tensor& x, const Tensor& factor, const Tensor& g) const;
};

// "triangular_solve": x from a (…, k, k) and b (…, m, n), op(a) x = b (left, k = m) or
// x op(a) = b (k = n), as jax.lax.linalg.triangular_solve (kernels::TriangularSolve's flags).
class TriangularSolveOp final : public Operation {
 public:
  explicit TriangularSolveOp(kernels::TriangularSolve how) : how(how) {}
  const kernels::TriangularSolve how;

  std::string name() const override { return "triangular_solve"; }
  std::string attributes() const override;
  ValueType result_type(std::span<const ValueType> operands) const override;
  void partition(Partitioner& p, int value, const Op& op) const override;
  Block run(const KernelContext& device, const Step& step,
            std::span<const Block> in) const override;
  Batched batch(const Op& op, std::span<const Batched> operands, int64_t size) const override;
  // JAX's: b̄ solves the transposed system with the cotangent; ā = -op(b̄ xᵀ) (left) or
  // -op(xᵀ b̄), on a's triangle (its diagonal left out when it is a unit one).
  Cotangents vjp(const Op& op, const Tensor& result, std::span<const Tensor> operands,
                 const Tensor& g) const override;
};

namespace {

// For each element of a matrix of `shape` (its last two dimensions), whether its row index
// compares to its column index as `op` says (kGt: below the diagonal, kEq: on it, ...): a bool
// mask of the whole shape.
Tensor where_index(const Tensor& like, const Shape& shape, Binary op) {
  const size_t rank = shape.size();
  const int64_t rows = shape[rank - 2], cols = shape[rank - 1];
  Shape row_shape(rank, 1), col_shape(rank, 1);
  row_shape[rank - 2] = rows;
  col_shape[rank - 1] = cols;
  const Tensor r = lax::broadcast(
      lax::reshape(lax::iota(like.trace(), {DType::kInt32, {rows}}), row_shape), shape);
  const Tensor c = lax::broadcast(
      lax::reshape(lax::iota(like.trace(), {DType::kInt32, {cols}}), col_shape), shape);
  return lax::binary(op, r, c);
}

// The triangle a triangular solve reads: lower or upper, the diagonal left out when it is a
// unit one.
Tensor triangle(const Tensor& like, const Shape& shape, bool lower, bool strict) {
  const Binary op =
      lower ? (strict ? Binary::kGt : Binary::kGe) : (strict ? Binary::kLt : Binary::kLe);
  return where_index(like, shape, op);
}

// x with its last two dimensions swapped.
Tensor swapped(const Tensor& x) {
  std::vector<int64_t> perm(x.shape().size());
  for (size_t i = 0; i < perm.size(); ++i) perm[i] = static_cast<int64_t>(i);
  std::swap(perm[perm.size() - 1], perm[perm.size() - 2]);
  return lax::transpose(x, perm);
}

// x's entries where `mask`, zeros elsewhere.
Tensor masked(const Tensor& mask, const Tensor& x) {
  return lax::select(mask, x, lax::full_like(x, 0));
}

}  // namespace

std::string FactorizationOp::attributes() const {
  return kind == Kind::kCholesky ? std::string() : fmt::format("r={}", kind == Kind::kR ? 1 : 0);
}

ValueType FactorizationOp::result_type(std::span<const ValueType> operands) const {
  check_operand_count(name(), operands, 1);
  const ValueType& a = operands[0];
  const size_t rank = a.shape.size();
  if (!kernels::factorizable(a.dtype) || rank < 2 ||
      (kind == Kind::kCholesky && a.shape[rank - 1] != a.shape[rank - 2])) {
    throw InvalidArgument(fmt::format(
        "{}: wants float32 or float64 matrices in the last two dimensions{}, not {}", name(),
        kind == Kind::kCholesky ? " (square)" : "", type_text(a.dtype, a.shape)));
  }
  Shape out = a.shape;
  const int64_t k = std::min(out[rank - 2], out[rank - 1]);
  if (kind == Kind::kQ) out[rank - 1] = k;
  if (kind == Kind::kR) out[rank - 2] = k;
  return {a.dtype, out};
}

void FactorizationOp::partition(Partitioner& p, int value, const Op& op) const {
  Layout in = p.layout(op.inputs[0]).settled();
  const size_t rank = in.dims.size();
  in.dims[rank - 1].clear();
  in.dims[rank - 2].clear();
  p.compute(value, {p.slot_with(op.inputs[0], in)}, in);
}

Block FactorizationOp::run(const KernelContext& device, const Step& step,
                           std::span<const Block> in) const {
  const Shape& shape = in[0].shape();
  const size_t rank = shape.size();
  const int64_t m = shape[rank - 2], n = shape[rank - 1];
  const int64_t batch = m * n == 0 ? 0 : in[0].size() / (m * n);
  Block out = device.allocate(step.dtype, step.shape);
  if (kind == Kind::kCholesky) {
    device.backend.cholesky(step.dtype, in[0].bytes().data(), batch, n, out.mutable_bytes().data());
    return out;
  }
  // Both factors come from one decomposition: the other goes to a scratch block.
  const int64_t k = std::min(m, n);
  Shape other = shape;
  if (kind == Kind::kQ) other[rank - 2] = k;  // R: k×n
  if (kind == Kind::kR) other[rank - 1] = k;  // Q: m×k
  Block scratch = device.allocate(step.dtype, other);
  std::byte* q = kind == Kind::kQ ? out.mutable_bytes().data() : scratch.mutable_bytes().data();
  std::byte* r = kind == Kind::kR ? out.mutable_bytes().data() : scratch.mutable_bytes().data();
  device.backend.qr(step.dtype, in[0].bytes().data(), batch, m, n, q, r);
  return out;
}

Batched FactorizationOp::batch(const Op& /*op*/, std::span<const Batched> operands,
                               int64_t size) const {
  return {lax::bind(make_operation<FactorizationOp>(kind), {batched_first(operands[0], size)}), 0};
}

namespace {

// x's last dimension from `from` for `count` elements.
Tensor columns(const Tensor& x, int64_t from, int64_t count) {
  std::vector<int64_t> start(x.shape().size(), 0);
  start.back() = from;
  Shape extent = x.shape();
  extent.back() = count;
  return lax::slice(x, start, extent);
}

// The cotangent of x for a thin QR, x = Q R with R square (k × k), given Q's cotangent and R's
// (either may be absent): JAX's JVP (A = dx R⁻¹, B = Qᵀ A, D = tril(B, -1) - tril(B, -1)ᵀ,
// dq = Q (D - B) + A, dr = (B - D) R) transposed. D̄ = Qᵀ Q̄ - R̄ Rᵀ, B̄ = tril(D̄ - D̄ᵀ, -1) - D̄,
// Ā = Q̄ + Q B̄, x̄ = Ā R⁻ᵀ.
Tensor thin_qr_vjp(const Tensor& q, const Tensor& r, const std::optional<Tensor>& q_bar,
                   const std::optional<Tensor>& r_bar) {
  const size_t batch = r.shape().size() - 2;
  std::optional<Tensor> d_bar;
  if (q_bar) d_bar = lax::matmul(swapped(q), *q_bar, batch);
  if (r_bar) {
    const Tensor through_r = lax::matmul(*r_bar, swapped(r), batch);
    d_bar = d_bar ? *d_bar - through_r : -through_r;
  }
  const Tensor strict = where_index(r, r.shape(), Binary::kGt);
  const Tensor b_bar = masked(strict, *d_bar - swapped(*d_bar)) - *d_bar;
  Tensor a_bar = lax::matmul(q, b_bar, batch);
  if (q_bar) a_bar = *q_bar + a_bar;
  return lax::triangular_solve(r, a_bar, {false, false, true, false});
}

}  // namespace

Cotangents FactorizationOp::qr_vjp(const Tensor& x, const Tensor& factor, const Tensor& g) const {
  const Shape& shape = x.shape();
  const size_t batch = shape.size() - 2;
  const int64_t m = shape[batch], n = shape[batch + 1];
  const bool is_q = kind == Kind::kQ;
  // This op's result is one factor; only the other is computed again.
  const Tensor q = is_q ? factor : lax::qr_q(x), r = is_q ? lax::qr_r(x) : factor;
  if (m >= n) {
    return {is_q ? thin_qr_vjp(q, r, g, std::nullopt) : thin_qr_vjp(q, r, std::nullopt, g)};
  }
  // Wide (JAX's rule): x = [X1 X2], R = [R1 R2] with X1 = Q R1 a square QR and R2 = Qᵀ X2, so
  // dR2 = dQᵀ X2 + Qᵀ dX2. Transposed: Q's cotangent gains X2 R̄2ᵀ, and X2's is Q R̄2.
  const Tensor r1 = columns(r, 0, m);
  if (is_q) {
    return {lax::concatenate(
        {thin_qr_vjp(q, r1, g, std::nullopt), lax::full_like(columns(x, m, n - m), 0)},
        static_cast<int>(batch + 1))};
  }
  const Tensor r1_bar = columns(g, 0, m), r2_bar = columns(g, m, n - m);
  const Tensor x2 = columns(x, m, n - m);
  const Tensor x1_bar = thin_qr_vjp(q, r1, lax::matmul(x2, swapped(r2_bar), batch), r1_bar);
  return {lax::concatenate({x1_bar, lax::matmul(q, r2_bar, batch)}, static_cast<int>(batch + 1))};
}

Cotangents FactorizationOp::vjp(const Op& op, const Tensor& l, std::span<const Tensor> operands,
                                const Tensor& g) const {
  if (kind != Kind::kCholesky) return qr_vjp(operands[0], l, g);
  const size_t batch = l.shape().size() - 2;
  // φ(Lᵀ Ḡ): the lower triangle, the diagonal halved (JAX divides by 1 + I).
  const Tensor lt_g = lax::matmul(swapped(l), g, batch);
  const Tensor phi = lax::select(where_index(l, l.shape(), Binary::kGt), lt_g,
                                 masked(where_index(l, l.shape(), Binary::kEq), lt_g * 0.5));
  const Tensor left = lax::triangular_solve(l, phi, {true, true, true, false});
  return {lax::triangular_solve(l, left, {false, true, false, false})};
}

std::string TriangularSolveOp::attributes() const {
  return fmt::format("left={} lower={} transpose_a={} unit={}", how.left_side ? 1 : 0,
                     how.lower ? 1 : 0, how.transpose_a ? 1 : 0, how.unit_diagonal ? 1 : 0);
}

ValueType TriangularSolveOp::result_type(std::span<const ValueType> operands) const {
  check_operand_count(name(), operands, 2);
  const ValueType &a = operands[0], &b = operands[1];
  const size_t rank = a.shape.size();
  const bool matrices = rank >= 2 && b.shape.size() == rank && kernels::factorizable(a.dtype) &&
                        a.dtype == b.dtype && a.shape[rank - 1] == a.shape[rank - 2] &&
                        std::equal(a.shape.begin(), a.shape.end() - 2, b.shape.begin());
  if (!matrices || a.shape[rank - 1] != b.shape[rank - (how.left_side ? 2 : 1)]) {
    throw InvalidArgument(fmt::format(
        "triangular_solve: wants a square float32 or float64 a and a b of its dtype and batch "
        "dimensions whose {} match a's, not a {} and b {}",
        how.left_side ? "rows" : "columns", type_text(a.dtype, a.shape),
        type_text(b.dtype, b.shape)));
  }
  return {b.dtype, b.shape};
}

void TriangularSolveOp::partition(Partitioner& p, int value, const Op& op) const {
  Layout in = p.layout(op.inputs[0]).settled();
  const size_t rank = in.dims.size();
  in.dims[rank - 1].clear();
  in.dims[rank - 2].clear();
  p.compute(value, {p.slot_with(op.inputs[0], in), p.slot_with(op.inputs[1], in)}, in);
}

Block TriangularSolveOp::run(const KernelContext& device, const Step& step,
                             std::span<const Block> in) const {
  const Shape& shape = in[1].shape();
  const size_t rank = shape.size();
  const int64_t m = shape[rank - 2], n = shape[rank - 1];
  const int64_t batch = m * n == 0 ? 0 : in[1].size() / (m * n);
  Block out = device.allocate(step.dtype, step.shape);
  device.backend.triangular_solve(step.dtype, in[0].bytes().data(), in[1].bytes().data(), batch, m,
                                  n, how, out.mutable_bytes().data());
  return out;
}

Batched TriangularSolveOp::batch(const Op& /*op*/, std::span<const Batched> operands,
                                 int64_t size) const {
  return {lax::bind(make_operation<TriangularSolveOp>(how),
                    {batched_first(operands[0], size), batched_first(operands[1], size)}),
          0};
}

Cotangents TriangularSolveOp::vjp(const Op& /*op*/, const Tensor& x,
                                  std::span<const Tensor> operands, const Tensor& g) const {
  const Tensor& a = operands[0];
  kernels::TriangularSolve back = how;
  back.transpose_a = !how.transpose_a;
  const Tensor gb = lax::triangular_solve(a, g, back);
  const size_t batch = x.shape().size() - 2;
  Tensor ga =
      how.left_side ? lax::matmul(gb, swapped(x), batch) : lax::matmul(swapped(x), gb, batch);
  if (how.transpose_a) ga = swapped(ga);
  ga = -masked(triangle(a, a.shape(), how.lower, how.unit_diagonal), ga);
  return {ga, gb};
}

namespace {

const bool linalg_registered = [] {
  register_operation("cholesky", [](const AttributeReader&) {
    return make_operation<FactorizationOp>(FactorizationOp::Kind::kCholesky);
  });
  register_operation("triangular_solve", [](const AttributeReader& r) {
    return make_operation<TriangularSolveOp>(
        kernels::TriangularSolve{r.integer("left") != 0, r.integer("lower") != 0,
                                 r.integer("transpose_a") != 0, r.integer("unit") != 0});
  });
  register_operation("qr", [](const AttributeReader& r) {
    return make_operation<FactorizationOp>(r.integer("r") != 0 ? FactorizationOp::Kind::kR
                                                               : FactorizationOp::Kind::kQ);
  });
  return true;
}();

}  // namespace

namespace lax {

Tensor cholesky(const Tensor& a) {
  return bind(make_operation<FactorizationOp>(FactorizationOp::Kind::kCholesky), {a});
}
Tensor qr_q(const Tensor& a) {
  return bind(make_operation<FactorizationOp>(FactorizationOp::Kind::kQ), {a});
}
Tensor qr_r(const Tensor& a) {
  return bind(make_operation<FactorizationOp>(FactorizationOp::Kind::kR), {a});
}
Tensor triangular_solve(const Tensor& a, const Tensor& b, kernels::TriangularSolve how) {
  return bind(make_operation<TriangularSolveOp>(how), {a, b});
}

}  // namespace lax
}  // namespace spmd::compiler
