// The vector-Jacobian product of every differentiable operation of the typed program, written
// with spmd::numpy on Tensors (so each rule is traced, partitioned and fused like user code).
#include <fmt/format.h>

#include <numeric>

#include "jit/autodiff.h"
#include "jit/manual.h"
#include "jit/numpy_internal.h"
#include "jit/trace.h"
#include "spmd/error.h"
#include "spmd/jit.h"
#include "spmd/numpy.h"

namespace spmd::compiler {
namespace {

namespace jnp = spmd::numpy;
using kernels::Binary;
using kernels::Unary;
using Cotangents = std::vector<std::optional<Tensor>>;

// The last two dimensions swapped.
Tensor swap_last(const Tensor& t) {
  std::vector<int> perm(static_cast<size_t>(t.ndim()));
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[perm.size() - 1], perm[perm.size() - 2]);
  return jnp::transpose(t, perm);
}

Cotangents unary(const Op& op, const Tensor& y, const Tensor& x, const Tensor& g) {
  switch (static_cast<Unary>(op.code)) {
    case Unary::kNeg:
      return {-g};
    case Unary::kExp:
      return {g * y};
    case Unary::kLog:
      return {g / x};
    case Unary::kTanh:
      return {g * (1.0f - y * y)};
    case Unary::kSqrt:
      return {g * 0.5f / y};
    case Unary::kRsqrt:
      return {g * -0.5f * y / x};
    case Unary::kAbs:
      return {g * jnp::sign(x)};
    case Unary::kSign:
      return {jnp::zeros_like(x)};
    case Unary::kNot:
      break;
  }
  throw InvalidArgument(fmt::format("grad: {} has no derivative", op_name(op)));
}

// max/min: the cotangent goes to the chosen operand, split evenly at ties (as JAX's).
Cotangents choose(const Tensor& a, const Tensor& b, const Tensor& g, bool max) {
  const Tensor wins = jnp::astype(max ? a > b : a < b, g.dtype());
  const Tensor ties = jnp::astype(jnp::equal(a, b), g.dtype()) * 0.5f;
  const Tensor loses = jnp::astype(max ? a < b : a > b, g.dtype());
  return {g * (wins + ties), g * (loses + ties)};
}

Cotangents binary(const Op& op, const Tensor& y, const Tensor& a, const Tensor& b,
                  const Tensor& g) {
  switch (static_cast<Binary>(op.code)) {
    case Binary::kAdd:
      return {g, g};
    case Binary::kSub:
      return {g, -g};
    case Binary::kMul:
      return {g * b, g * a};
    case Binary::kDiv:
      return {g / b, -g * a / (b * b)};
    case Binary::kPow:
      return {g * b * jnp::power(a, b - 1.0f), g * jnp::log(a) * y};
    case Binary::kMax:
      return choose(a, b, g, true);
    case Binary::kMin:
      return choose(a, b, g, false);
    default:
      break;
  }
  throw InvalidArgument(fmt::format("grad: {} has no derivative (its result is {})", op_name(op),
                                    type_text(op.dtype, op.shape)));
}

Cotangents reduce(const Op& op, const Tensor& y, const Tensor& x, const Tensor& g) {
  Shape kept = x.shape();
  for (int64_t axis : op.ints) kept[static_cast<size_t>(axis)] = 1;
  const Tensor spread = jnp::broadcast_to(jnp::reshape(g, kept), x.shape());
  if (static_cast<kernels::Reduce>(op.code) == kernels::Reduce::kSum) return {spread};
  // max/min: shared evenly among the elements equal to the result.
  std::vector<int> axes(op.ints.begin(), op.ints.end());
  const Tensor chosen =
      jnp::astype(jnp::equal(x, jnp::broadcast_to(jnp::reshape(y, kept), x.shape())), g.dtype());
  return {spread * chosen / jnp::sum(chosen, axes, true)};
}

Cotangents slice(const Op& op, const Tensor& x, const Tensor& g) {
  Tensor out = g;
  const Shape full = x.shape();
  for (size_t d = 0; d < full.size(); ++d) {
    if (op.shape[d] == full[d]) continue;
    Shape before = out.shape(), after = out.shape();
    before[d] = op.ints[d];
    after[d] = full[d] - op.ints[d] - op.shape[d];
    out = jnp::concatenate({jnp::zeros(before, g.dtype()), out, jnp::zeros(after, g.dtype())},
                           static_cast<int>(d));
  }
  return {out};
}

Cotangents concat(const Op& op, const std::vector<Tensor>& in, const Tensor& g) {
  Cotangents out;
  const auto axis = static_cast<size_t>(op.ints[0]);
  int64_t offset = 0;
  for (const Tensor& part : in) {
    std::vector<int64_t> start(g.shape().size(), 0), stop = g.shape();
    start[axis] = offset;
    stop[axis] = offset + part.shape()[axis];
    offset = stop[axis];
    out.emplace_back(jnp::slice(g, start, stop));
  }
  return out;
}

Cotangents convert(const Op& op, const Tensor& x, const Tensor& g) {
  if (!is_floating(x.dtype())) {
    throw InvalidArgument(fmt::format(
        "grad: differentiating through convert from {} to {}: integer and bool values have no "
        "derivative",
        dtype_name(x.dtype()), dtype_name(op.dtype)));
  }
  return {jnp::astype(g, x.dtype())};
}

// lax::shard_map's boundaries and psum, as JAX transposes them: psum's cotangent passes as it
// is (the identity); a block's goes out to the global value, a global result's comes in as
// blocks. (Where a block invariant over an axis meets one varying over it, autodiff.cc sums the
// cotangent over that axis.)
Tensor manual(const Op& op, const Tensor& g) {
  const NamedSharding& sharding = *op.sharding;
  if (op.kind == OpKind::kAxisSum) return g;
  if (op.kind == OpKind::kManualOut) return manual_in(g, sharding.mesh(), sharding.spec());
  return manual_out(g, sharding.mesh(), sharding.spec());
}

}  // namespace

Tensor unbroadcast(const Tensor& g, const Shape& shape) {
  const Shape from = g.shape();
  if (from == shape) return g;
  numpy::AxisList axes;
  const size_t offset = from.size() - shape.size();
  for (size_t d = 0; d < from.size(); ++d) {
    if (d < offset || (shape[d - offset] == 1 && from[d] != 1)) axes.push_back(static_cast<int>(d));
  }
  return jnp::reshape(jnp::sum(g, axes), shape);
}

std::vector<std::optional<Tensor>> vjp_rule(const Op& op, const Tensor& out,
                                            const std::vector<Tensor>& in, const Tensor& g) {
  if (!is_floating(op.dtype)) {
    throw InvalidArgument(fmt::format(
        "grad: differentiating through {} ({}): integer and bool operations have no derivative",
        op_name(op), type_text(op.dtype, op.shape)));
  }
  Cotangents c;
  switch (op.kind) {
    case OpKind::kUnary:
      c = unary(op, out, in[0], g);
      break;
    case OpKind::kBinary:
      c = binary(op, out, in[0], in[1], g);
      break;
    case OpKind::kSelect:
      c = {std::nullopt, jnp::where(in[0], g, jnp::zeros_like(g)),
           jnp::where(in[0], jnp::zeros_like(g), g)};
      break;
    case OpKind::kConvert:
      c = convert(op, in[0], g);
      break;
    case OpKind::kBroadcast:
      c = {g};
      break;  // summed back below
    case OpKind::kReshape:
      c = {jnp::reshape(g, in[0].shape())};
      break;
    case OpKind::kTranspose: {
      std::vector<int> inverse(op.ints.size());
      for (size_t i = 0; i < op.ints.size(); ++i)
        inverse[static_cast<size_t>(op.ints[i])] = static_cast<int>(i);
      c = {jnp::transpose(g, inverse)};
      break;
    }
    case OpKind::kReduce:
      c = reduce(op, out, in[0], g);
      break;
    case OpKind::kDot:
      c = {jnp::matmul(g, swap_last(in[1])), jnp::matmul(swap_last(in[0]), g)};
      break;
    case OpKind::kSlice:
      c = slice(op, in[0], g);
      break;
    case OpKind::kConcat:
      c = concat(op, in, g);
      break;
    case OpKind::kConstraint:
      c = {lax::with_sharding_constraint(g, *op.sharding)};
      break;
    case OpKind::kManualIn:
    case OpKind::kManualOut:
    case OpKind::kAxisSum:
      c = {manual(op, g)};
      break;
    default:
      return Cotangents(in.size());  // leaves: parameters, constants, fills, iota
  }
  for (size_t i = 0; i < c.size(); ++i) {
    if (c[i]) c[i] = unbroadcast(*c[i], in[i].shape());
  }
  return c;
}

}  // namespace spmd::compiler
