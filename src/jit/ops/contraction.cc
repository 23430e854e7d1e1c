// The contraction family: one kind, "dot", described by einsum letters ("bmk,bkn->bmn"), as
// PyTorch DTensor describes every matmul-like operation. jnp.dot, batched jnp.matmul, jnp.einsum
// and the derivatives of all three are this one operation with other letters, and its sharding
// rule is derived from the letters alone:
//   batch letters (both operands and the result): split as either operand splits them;
//   contracting letters (both operands, not the result): split alike on both sides, the result
//     then a pending sum over their axes (settled where it is used: psum or psum_scatter);
//   free letters (one operand and the result): split as that operand splits them.
// Each operand's letters are distinct and each is in the other operand or the result (spmd::numpy
// sums a letter found in one operand only before it contracts).
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "jit/batching.h"
#include "jit/lax.h"
#include "jit/op_registry.h"
#include "jit/operation.h"
#include "jit/ops/gemm_plan.h"
#include "jit/ops/layout.h"
#include "jit/partitioner.h"
#include "jit/program.h"
#include "jit/sharding_in_types.h"
#include "jit/trace.h"
#include "spmd/error.h"

namespace spmd::compiler {

//
// Sharding in types (JAX's dot_general rule, by letters): batch letters split alike on both sides
// (the result takes the lhs's), contracting letters split on one side at most, free letters as
// their operand; ShardingTypeError otherwise, naming `out_sharding` as the remedy where the
// result's split is ambiguous. With `out_sharding` (Explicit axes only, canonical) the result's
// type is that spec, whatever the operands'.
class DotOp final : public Operation {
 public:
  DotOp(std::string lhs, std::string rhs, std::string out,
        std::optional<PartitionSpec> out_sharding = std::nullopt);
  const std::string lhs, rhs, out;  // one letter per dimension
  const ContractionLetters letters;
  const std::optional<PartitionSpec> out_sharding;

  std::string name() const override { return "dot"; }
  // "einsum=bmk,bkn->bmn", and "out_sharding=PartitionSpec(…)" when given.
  std::string attributes() const override;
  ValueType result_type(std::span<const ValueType> operands) const override;
  PartitionSpec type_spec(std::span<const ValueType> operands, const ValueType& result,
                          const Mesh& mesh) const override;
  void partition(Partitioner& p, int value, const Op& op) const override;
  // Shardy's dot_general rule: factors for the batch letters, the lhs's free ones, the rhs's,
  // then the contracting ones (reduction factors).
  std::optional<FactorRule> factor_rule(std::span<const ValueType> operands,
                                        const ValueType& result) const override;
  // One batched matrix product through the backend, each operand and the result read and
  // written where they lie, through transpose flags, leading dimensions and batch strides
  // (gemm_plan.h); only what those cannot describe is copied into matrix order.
  Block run(const KernelContext& device, const Step& step,
            std::span<const Block> in) const override;
  // Each operand's cotangent is a contraction of g with the other operand, typed as the operand
  // (out_sharding) on a mesh with Explicit axes, as JAX's transpose rule does.
  Cotangents vjp(const Op& op, const Tensor& result, std::span<const Tensor> operands,
                 const Tensor& g) const override;
  // A new letter for the slices: a batch letter when both operands are batched, a free one
  // otherwise.
  Batched batch(const Op& op, std::span<const Batched> operands, int64_t size) const override;
};

// jnp.matmul's letters for `batch` leading dimensions: "…mk,…kn->…mn".
std::shared_ptr<const Operation> matmul_operation(
    size_t batch, std::optional<PartitionSpec> out_sharding = std::nullopt);

namespace {

bool has(const std::string& s, char c) { return s.find(c) != std::string::npos; }

ContractionLetters roles(const std::string& lhs, const std::string& rhs, const std::string& out) {
  const std::string spec = lhs + "," + rhs + "->" + out;
  auto distinct = [&](const std::string& s) {
    for (char c : s) {
      if (c < 'a' || c > 'z' || std::count(s.begin(), s.end(), c) != 1) {
        throw InvalidArgument(
            fmt::format("dot: einsum={}: '{}' is not a distinct lowercase letter", spec, c));
      }
    }
  };
  distinct(lhs);
  distinct(rhs);
  distinct(out);
  ContractionLetters r;
  for (char c : out) {
    if (!has(lhs, c) && !has(rhs, c))
      throw InvalidArgument(fmt::format("dot: einsum={}: '{}' is in no operand", spec, c));
    if (has(lhs, c) && has(rhs, c)) r.batch += c;
  }
  for (char c : lhs) {
    if (has(rhs, c) && !has(out, c)) r.contracting += c;
    if (!has(rhs, c)) r.lhs_free += c;
    if (!has(rhs, c) && !has(out, c))
      throw InvalidArgument(fmt::format("dot: einsum={}: '{}' is in one operand only", spec, c));
  }
  for (char c : rhs) {
    if (!has(lhs, c)) r.rhs_free += c;
    if (!has(lhs, c) && !has(out, c))
      throw InvalidArgument(fmt::format("dot: einsum={}: '{}' is in one operand only", spec, c));
  }
  return r;
}

// The permutation taking `from`'s dimensions to `to`'s order.
std::vector<int> permutation(const std::string& from, const std::string& to) {
  std::vector<int> perm;
  for (char c : to) perm.push_back(static_cast<int>(from.find(c)));
  return perm;
}

Shape shape_of(const std::string& letters, const std::map<char, int64_t>& sizes) {
  Shape s;
  for (char c : letters) s.push_back(sizes.at(c));
  return s;
}

// `b` (letters `from`) in letter order `to`: itself when it already is.
Block arranged(const KernelContext& device, const Block& b, const std::string& from,
               const std::string& to, const std::map<char, int64_t>& sizes) {
  if (from == to) return b;
  Block out = device.allocate(b.dtype(), shape_of(to, sizes));
  device.backend.transpose(dtype_size(b.dtype()), b.bytes().data(), b.shape(),
                           permutation(from, to), out.mutable_bytes().data());
  return out;
}

}  // namespace

DotOp::DotOp(std::string lhs, std::string rhs, std::string out,
             std::optional<PartitionSpec> out_sharding)
    : lhs(std::move(lhs)),
      rhs(std::move(rhs)),
      out(std::move(out)),
      letters(roles(this->lhs, this->rhs, this->out)),
      out_sharding(std::move(out_sharding)) {}

std::string DotOp::attributes() const {
  std::string text = fmt::format("einsum={},{}->{}", lhs, rhs, out);
  if (out_sharding) text += " out_sharding=" + out_sharding->to_string();
  return text;
}

PartitionSpec DotOp::type_spec(std::span<const ValueType> operands, const ValueType& result,
                               const Mesh& mesh) const {
  if (out_sharding) return explicit_part(*out_sharding, mesh, result.shape.size());
  const std::vector<AxisEntry> l = type_entries(operands[0]), r = type_entries(operands[1]);
  auto of_l = [&](char c) { return l[lhs.find(c)]; };
  auto of_r = [&](char c) { return r[rhs.find(c)]; };
  auto refuse = [&](const std::string& why) {
    throw ShardingTypeError(
        fmt::format("dot einsum={},{}->{} of {}: {}", lhs, rhs, out, typed_list(operands), why));
  };
  for (char c : letters.batch) {
    if (!of_l(c).is_none() && !of_r(c).is_none() && !(of_l(c) == of_r(c))) {
      refuse(
          fmt::format("batch dimension '{}' is split differently on the two sides (lhs batch "
                      "dimensions and rhs batch dimensions must have consistent sharding). "
                      "Reshard one side (reshard: jax.sharding.reshard)",
                      c));
    }
  }
  for (char c : letters.contracting) {
    if (of_l(c).is_none() || of_r(c).is_none()) continue;
    if (!(of_l(c) == of_r(c))) {
      refuse(
          fmt::format("contracting dimension '{}' is split differently on the two sides "
                      "(contracting dimensions must have consistent sharding). Reshard one "
                      "side (reshard: jax.sharding.reshard)",
                      c));
    }
    refuse(
        fmt::format("contracting dimension '{}' is split on both sides, so it is ambiguous "
                    "how the result should be split (Contracting dimensions are sharded). "
                    "Give the result's sharding with out_sharding=",
                    c));
  }
  std::vector<AxisEntry> entries;
  for (char c : out) entries.push_back(has(lhs, c) ? of_l(c) : of_r(c));
  return canonical_spec(std::move(entries));
}

ValueType DotOp::result_type(std::span<const ValueType> operands) const {
  check_operand_count("dot", operands, 2);
  if (operands[0].dtype != operands[1].dtype) {
    throw InvalidArgument(fmt::format("dot: operands of two dtypes ({} and {})",
                                      dtype_name(operands[0].dtype),
                                      dtype_name(operands[1].dtype)));
  }
  std::map<char, int64_t> sizes;
  const std::string* names[] = {&lhs, &rhs};
  for (size_t i = 0; i < 2; ++i) {
    const Shape& s = operands[i].shape;
    if (s.size() != names[i]->size()) {
      throw InvalidArgument(fmt::format("dot: einsum={},{}->{}: '{}' for an operand of rank {}",
                                        lhs, rhs, out, *names[i], s.size()));
    }
    for (size_t d = 0; d < s.size(); ++d) {
      auto [it, fresh] = sizes.emplace((*names[i])[d], s[d]);
      if (!fresh && it->second != s[d]) {
        throw InvalidArgument(fmt::format("dot: einsum={},{}->{}: '{}' has sizes {} and {}", lhs,
                                          rhs, out, it->first, it->second, s[d]));
      }
    }
  }
  return {operands[0].dtype, shape_of(out, sizes)};
}

void DotOp::partition(Partitioner& p, int value, const Op& op) const {
  const Layout l = p.layout(op.inputs[0]).settled();
  const Layout r = p.layout(op.inputs[1]).settled();
  Layout a = Layout::replicated(lhs.size()), b = Layout::replicated(rhs.size()),
         result = Layout::replicated(out.size());
  std::set<int> used;
  auto take = [&](const std::vector<int>& axes) -> std::vector<int> {
    if (axes.empty() || overlaps(axes, used)) return {};
    used.insert(axes.begin(), axes.end());
    return axes;
  };
  auto in_l = [&](char c) -> std::vector<int>& { return a.dims[lhs.find(c)]; };
  auto in_r = [&](char c) -> std::vector<int>& { return b.dims[rhs.find(c)]; };
  auto of_l = [&](char c) { return l.dims[lhs.find(c)]; };
  auto of_r = [&](char c) { return r.dims[rhs.find(c)]; };
  for (char c : letters.batch) {
    in_l(c) = in_r(c) = result.dims[out.find(c)] = take(of_l(c).empty() ? of_r(c) : of_l(c));
  }
  for (char c : letters.contracting) {
    const std::vector<int> axes = take(of_l(c).empty() ? of_r(c) : of_l(c));
    in_l(c) = in_r(c) = axes;
    result.partial.insert(result.partial.end(), axes.begin(), axes.end());
  }
  for (char c : letters.lhs_free) in_l(c) = result.dims[out.find(c)] = take(of_l(c));
  for (char c : letters.rhs_free) in_r(c) = result.dims[out.find(c)] = take(of_r(c));
  // Zero in both operands' padding along the contracted dimensions of an uneven split.
  std::vector<int> contracted_l, contracted_r;
  for (char c : letters.contracting) {
    contracted_l.push_back(static_cast<int>(lhs.find(c)));
    contracted_r.push_back(static_cast<int>(rhs.find(c)));
  }
  const int x = p.fill_padding(op.inputs[0], p.slot_with(op.inputs[0], a), a, contracted_l,
                               PaddingFill::kZero);
  const int y = p.fill_padding(op.inputs[1], p.slot_with(op.inputs[1], b), b, contracted_r,
                               PaddingFill::kZero);
  p.compute(value, {x, y}, result);
}

std::optional<FactorRule> DotOp::factor_rule(std::span<const ValueType> operands,
                                             const ValueType& /*result*/) const {
  FactorRule rule;
  rule.operands = {std::vector<int>(lhs.size(), -1), std::vector<int>(rhs.size(), -1)};
  rule.result.assign(out.size(), -1);
  auto add = [&](const std::string& group, FactorRule::Kind kind) {
    for (char c : group) {
      const auto l = lhs.find(c), r = rhs.find(c), o = out.find(c);
      const int64_t size = l != std::string::npos ? operands[0].shape[l] : operands[1].shape[r];
      const int f = rule.add(size, kind);
      if (l != std::string::npos) rule.operands[0][l] = f;
      if (r != std::string::npos) rule.operands[1][r] = f;
      if (o != std::string::npos) rule.result[o] = f;
    }
  };
  add(letters.batch, FactorRule::Kind::kPassThrough);
  add(letters.lhs_free, FactorRule::Kind::kPassThrough);
  add(letters.rhs_free, FactorRule::Kind::kPassThrough);
  add(letters.contracting, FactorRule::Kind::kReduction);
  return rule;
}

Block DotOp::run(const KernelContext& device, const Step& step, std::span<const Block> in) const {
  std::map<char, int64_t> sizes;
  for (size_t d = 0; d < lhs.size(); ++d) sizes[lhs[d]] = in[0].shape()[d];
  for (size_t d = 0; d < rhs.size(); ++d) sizes[rhs[d]] = in[1].shape()[d];
  const GemmPlan plan = plan_gemm(lhs, rhs, out, letters, sizes);
  const Block a =
      plan.arrange_lhs ? arranged(device, in[0], lhs, lhs_matrix_order(letters), sizes) : in[0];
  const Block b =
      plan.arrange_rhs ? arranged(device, in[1], rhs, rhs_matrix_order(letters), sizes) : in[1];
  const std::string result_letters = plan.arrange_out ? product_order(letters) : out;
  Block result = device.allocate(step.dtype, shape_of(result_letters, sizes));
  device.backend.matmul(step.dtype, plan.shape, (plan.swap ? b : a).bytes().data(),
                        (plan.swap ? a : b).bytes().data(), result.mutable_bytes().data());
  return arranged(device, result, result_letters, out, sizes);
}

Cotangents DotOp::vjp(const Op& /*op*/, const Tensor& /*result*/, std::span<const Tensor> operands,
                      const Tensor& g) const {
  const Tensor& x = operands[0];
  const Tensor& y = operands[1];
  auto trace = trace_of("grad", {&g, &x, &y});
  // Typed as the operand whose cotangent it is: a contraction over a split batch is ambiguous.
  auto typed_as = [&](const Tensor& t) -> std::optional<PartitionSpec> {
    if (trace->mesh() == nullptr || !has_explicit_axes(*trace->mesh())) return std::nullopt;
    return trace->op(t.value()).spec;
  };
  return {trace->apply(make_operation<DotOp>(out, rhs, lhs, typed_as(x)), {g.value(), y.value()}),
          trace->apply(make_operation<DotOp>(lhs, out, rhs, typed_as(y)), {x.value(), g.value()})};
}

Batched DotOp::batch(const Op& /*op*/, std::span<const Batched> operands, int64_t size) const {
  char fresh = 'a';
  while (fresh <= 'z' && (has(lhs, fresh) || has(rhs, fresh) || has(out, fresh))) ++fresh;
  if (fresh > 'z') {
    throw InvalidArgument(fmt::format(
        "vmap: dot einsum={},{}->{} uses every letter, none is left for the batch", lhs, rhs, out));
  }
  const std::string mark(1, fresh);
  auto side = [&](const Batched& b, const std::string& letters) {
    return b.dim ? std::pair{batched_first(b, size), mark + letters} : std::pair{b.value, letters};
  };
  const auto [a, a_letters] = side(operands[0], lhs);
  const auto [b, b_letters] = side(operands[1], rhs);
  std::optional<PartitionSpec> typed;
  if (out_sharding) {
    std::vector<AxisEntry> entries = out_sharding->entries();
    if (!entries.empty()) entries.insert(entries.begin(), AxisEntry());
    typed = PartitionSpec::from_entries(std::move(entries));
  }
  return {lax::bind(make_operation<DotOp>(a_letters, b_letters, mark + out, typed), {a, b}), 0};
}

std::shared_ptr<const Operation> matmul_operation(size_t batch,
                                                  std::optional<PartitionSpec> out_sharding) {
  // Batch letters skip m, k and n.
  constexpr std::string_view pool = "abcdefghijlopqrstuvwxyz";
  if (batch > pool.size()) throw InvalidArgument("matmul: too many batch dimensions");
  const std::string b(pool.substr(0, batch));
  return make_operation<DotOp>(b + "mk", b + "kn", b + "mn", std::move(out_sharding));
}

namespace {

const OperationRegistration dot_op("dot", [](const AttributeReader& r) {
  const std::string& spec = r.text("einsum");
  const size_t comma = spec.find(','), arrow = spec.find("->");
  if (comma == std::string::npos || arrow == std::string::npos || arrow < comma) {
    throw InvalidArgument("dot: einsum=" + spec + " is not 'lhs,rhs->out'");
  }
  std::optional<PartitionSpec> out_sharding;
  if (r.has("out_sharding")) out_sharding = r.spec("out_sharding");
  return make_operation<DotOp>(spec.substr(0, comma), spec.substr(comma + 1, arrow - comma - 1),
                               spec.substr(arrow + 2), std::move(out_sharding));
});

}  // namespace

// --- the family's builders (lax.h) ---

namespace {

// An operand that is a transpose of another value, x.T in a @ x.T, is read through it: the dot
// takes the transpose's own operand, its letters permuted, and DotOp::run hands that to BLAS as
// a transposed matrix, where the transpose would have copied it (as XLA folds a transpose into
// its dot). An operand made otherwise is kept with its letters.
std::pair<Tensor, std::string> through_transpose(const Tensor& t, const std::string& letters) {
  if (t.trace() == nullptr) return {t, letters};
  const Op& op = t.trace()->op(t.value());
  const auto* transpose = dynamic_cast<const TransposeOp*>(op.operation.get());
  if (transpose == nullptr || transpose->permutation.size() != letters.size()) {
    return {t, letters};
  }
  std::string source(letters.size(), ' ');
  for (size_t i = 0; i < letters.size(); ++i) {
    source[static_cast<size_t>(transpose->permutation[i])] = letters[i];
  }
  return {Tensor(t.trace(), op.inputs.front()), source};
}

}  // namespace

namespace lax {

Tensor dot(const Tensor& a, const Tensor& b, const std::string& lhs, const std::string& rhs,
           const std::string& out, std::optional<PartitionSpec> out_sharding) {
  const auto [x, x_letters] = through_transpose(a, lhs);
  const auto [y, y_letters] = through_transpose(b, rhs);
  return bind(make_operation<DotOp>(x_letters, y_letters, out, std::move(out_sharding)), {x, y});
}

Tensor matmul(const Tensor& a, const Tensor& b, size_t batch,
              std::optional<PartitionSpec> out_sharding) {
  constexpr std::string_view pool = "abcdefghijlopqrstuvwxyz";  // matmul_operation's letters
  if (batch > pool.size()) throw InvalidArgument("matmul: too many batch dimensions");
  const std::string letters(pool.substr(0, batch));
  return dot(a, b, letters + "mk", letters + "kn", letters + "mn", std::move(out_sharding));
}

}  // namespace lax
}  // namespace spmd::compiler
