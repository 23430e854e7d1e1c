// The factorization family: "cholesky" and "qr" of the matrices in the last two dimensions of a
// float32 or float64 operand (kernels/linalg.h). The leading (batch) dimensions keep their split;
// each matrix is whole on its device. No derivatives yet.
#include <fmt/format.h>

#include <algorithm>

#include "jit/batching.h"
#include "jit/lax.h"
#include "jit/op_registry.h"
#include "jit/operation.h"
#include "jit/partitioner.h"
#include "jit/program.h"
#include "spmd/error.h"

namespace spmd::compiler {

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
};

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

const bool registered = [] {
  register_operation("cholesky", [](const AttributeReader&) {
    return make_operation<FactorizationOp>(FactorizationOp::Kind::kCholesky);
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

}  // namespace lax
}  // namespace spmd::compiler
