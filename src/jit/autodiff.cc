// The reverse walk of grad.h: which values depend on the differentiated ones, then each op's
// cotangent from the last to the first (its operation's own derivative, Operation::vjp),
// accumulated per value.
#include "jit/autodiff.h"

#include <fmt/format.h>

#include <map>

#include "jit/lax.h"
#include "jit/manual.h"
#include "jit/ops/manual.h"
#include "jit/sharding_in_types.h"
#include "jit/trace.h"
#include "spmd/error.h"
#include "spmd/grad.h"
#include "spmd/jit.h"

namespace spmd {
namespace {

using compiler::Op;

// active[v]: value v depends on one of `wrt` (v ≤ last).
std::vector<bool> active_values(const compiler::Program& program, int last,
                                const std::vector<Tensor>& wrt) {
  std::vector<bool> active(static_cast<size_t>(last) + 1, false);
  for (const Tensor& t : wrt) {
    if (t.value() <= last) active[static_cast<size_t>(t.value())] = true;
  }
  for (int v = 0; v <= last; ++v) {
    for (int in : program.ops[static_cast<size_t>(v)].inputs) {
      if (active[static_cast<size_t>(in)]) active[static_cast<size_t>(v)] = true;
    }
  }
  return active;
}

void accumulate(std::map<int, Tensor>& ct, int value, const Tensor& c) {
  auto it = ct.find(value);
  if (it == ct.end()) {
    ct.emplace(value, c);
  } else {
    it->second = it->second + c;
  }
}

// In a lax::shard_map with check_vma, a block invariant over an axis used by an operation whose
// result varies over it, or which makes it vary first (psum of an invariant value: JAX's implicit
// pvary), gets the sum of the devices' cotangents along that axis (pvary's transpose). Without
// check_vma, only psum's cotangent is summed (JAX's transpose of the unchecked psum is a psum).
Tensor summed_to_operand(const std::vector<compiler::Varying>& varying, const Op& op, int v, int in,
                         const Tensor& c) {
  if (op.is<compiler::ManualBoundary>()) return c;
  const compiler::Varying& mine = varying[static_cast<size_t>(v)];
  const uint64_t extra = mine.checked ? (mine.axes | compiler::implicit_vary(op)) &
                                            ~varying[static_cast<size_t>(in)].axes
                                      : compiler::implicit_vary(op);
  if (extra == 0) return c;
  return compiler::axis_sum(c, *mine.mesh, compiler::axis_positions(extra));
}

}  // namespace

namespace compiler {

Tensor unbroadcast(const Tensor& g, const Shape& shape) {
  const Shape from = g.shape();
  if (from == shape) return g;
  std::vector<int64_t> axes;
  const size_t offset = from.size() - shape.size();
  for (size_t d = 0; d < from.size(); ++d) {
    if (d < offset || (shape[d - offset] == 1 && from[d] != 1))
      axes.push_back(static_cast<int64_t>(d));
  }
  return lax::reshape(lax::reduce(kernels::Reduce::kSum, g, axes), shape);
}

Cotangents vjp_rule(const Op& op, const Tensor& out, const std::vector<Tensor>& in, const Tensor& g,
                    const std::vector<bool>& wanted) {
  if (in.empty()) return {};  // leaves: parameters, constants, fills, iota
  if (!is_floating(op.dtype)) {
    throw InvalidArgument(fmt::format(
        "grad: differentiating through {} ({}): integer and bool operations have no derivative",
        op_name(op), type_text(op.dtype, op.shape)));
  }
  Cotangents c = op.operation->vjp_wanted(op, out, in, g, wanted);
  for (size_t i = 0; i < c.size(); ++i) {
    if (c[i])
      c[i] = retyped(unbroadcast(*c[i], in[i].shape()), in[i].trace()->op(in[i].value()).spec);
  }
  return c;
}

}  // namespace compiler

std::vector<Tensor> vjp_of(const Tensor& out, const std::vector<Tensor>& wrt,
                           const Tensor& cotangent) {
  const auto trace = compiler::trace_of("grad", {&out, &cotangent});
  for (const Tensor& t : wrt) compiler::trace_of("grad", {&out, &t});
  if (!is_floating(out.dtype())) {
    throw InvalidArgument(fmt::format("grad: the function's result is {}, not floating",
                                      compiler::type_text(out.dtype(), out.shape())));
  }
  const int last = out.value();
  const std::vector<bool> active = active_values(trace->program(), last, wrt);
  const std::vector<compiler::Varying> varying = compiler::varying_axes(trace->program());
  // The values differentiated with respect to are independent variables, as JAX's vjp takes its
  // primals: the walk stops at them, and a wrt value computed from another (vjp(f, y, x) with y
  // made from x) passes nothing on to it.
  std::vector<bool> independent(static_cast<size_t>(last) + 1, false);
  for (const Tensor& t : wrt) {
    if (t.value() <= last) independent[static_cast<size_t>(t.value())] = true;
  }
  std::map<int, Tensor> ct;
  ct.emplace(last, cotangent);
  for (int v = last; v >= 0; --v) {
    auto it = ct.find(v);
    if (it == ct.end() || !active[static_cast<size_t>(v)]) continue;
    if (independent[static_cast<size_t>(v)]) continue;
    const Op op = trace->op(v);  // a copy: the rules append to the program
    std::vector<Tensor> inputs;
    std::vector<bool> wanted;
    for (int in : op.inputs) {
      inputs.emplace_back(trace, in);
      wanted.push_back(active[static_cast<size_t>(in)]);
    }
    const auto contributions = compiler::vjp_rule(op, Tensor(trace, v), inputs, it->second, wanted);
    for (size_t i = 0; i < op.inputs.size(); ++i) {
      if (contributions[i] && active[static_cast<size_t>(op.inputs[i])]) {
        accumulate(ct, op.inputs[i],
                   summed_to_operand(varying, op, v, op.inputs[i], *contributions[i]));
      }
    }
  }
  std::vector<Tensor> grads;
  for (const Tensor& t : wrt) {
    if (!is_floating(t.dtype())) {
      throw InvalidArgument(
          fmt::format("grad: a differentiated argument is {}; only floating "
                      "arguments have gradients",
                      compiler::type_text(t.dtype(), t.shape())));
    }
    auto it = ct.find(t.value());
    const Tensor g =
        it != ct.end() ? it->second : compiler::lax::full(t.trace(), t.shape(), t.dtype(), 0);
    grads.push_back(g);
  }
  return grads;
}

namespace lax {
Tensor stop_gradient(const Tensor& x) {
  return compiler::lax::unary(kernels::Unary::kStopGradient, x);
}

Tensor custom_vjp(const std::string& name, const std::vector<Tensor>& inputs, const Tensor& value,
                  CustomVjpRule rule, bool batchable) {
  for (const Tensor& t : inputs) compiler::trace_of("custom_vjp", {&value, &t});
  return compiler::lax::with_vjp(name, inputs, value, std::move(rule), batchable);
}
}  // namespace lax

namespace detail {
Tensor distinct_copy(const Tensor& x) { return compiler::lax::unary(kernels::Unary::kCopy, x); }
}  // namespace detail

std::vector<Tensor> vjp_of(const Tensor& out, const std::vector<Tensor>& wrt) {
  if (!out.shape().empty()) {
    throw InvalidArgument(
        fmt::format("grad: the function must return a scalar, not {} (use vjp with a cotangent)",
                    compiler::type_text(out.dtype(), out.shape())));
  }
  return vjp_of(out, wrt, compiler::lax::full(out.trace(), Shape{}, out.dtype(), 1));
}

}  // namespace spmd
