// XLA's value-changing rewrites of a traced program.
#include "jit/simplify.h"

#include <optional>
#include <vector>

#include "jit/ops/elementwise.h"
#include "jit/ops/layout.h"

namespace spmd::compiler {
namespace {

using kernels::Binary;
using kernels::Unary;

// How many ops and outputs read each value.
std::vector<int> readers(const Program& program) {
  std::vector<int> n(program.ops.size(), 0);
  for (const Op& op : program.ops) {
    for (int v : op.inputs) ++n[static_cast<size_t>(v)];
  }
  for (const Output& out : program.outputs) ++n[static_cast<size_t>(out.value)];
  return n;
}

bool is_reshape(const Op& op) { return op.inputs.size() == 1 && op.is<ReshapeOp>(); }

// sqrt(x * x), or sqrt(reshape(x * x)) through reshapes nothing else reads (XLA moves reshapes
// past element-wise ops, then simplifies): rewritten in `ops` to |x|, the innermost reshape made
// to read x itself.
void rewrite_square_root(std::vector<Op>& ops, const std::vector<int>& read, Op& op) {
  if (op.inputs.size() != 1 || !is_floating(op.dtype) || unary_of(*op.operation) != Unary::kSqrt) {
    return;
  }
  int reader = -1, v = op.inputs[0];
  while (is_reshape(ops[static_cast<size_t>(v)]) && read[static_cast<size_t>(v)] == 1) {
    reader = v;
    v = ops[static_cast<size_t>(v)].inputs[0];
  }
  const Op& square = ops[static_cast<size_t>(v)];
  if (square.inputs.size() != 2 || square.inputs[0] != square.inputs[1] ||
      binary_of(*square.operation) != Binary::kMul) {
    return;
  }
  const int x = square.inputs[0];
  (reader >= 0 ? ops[static_cast<size_t>(reader)].inputs[0] : op.inputs[0]) = x;
  op.operation = unary_operation(Unary::kAbs);
}

}  // namespace

Program simplified_like_xla(const Program& program) {
  Program out = program;
  const std::vector<int> read = readers(program);
  for (Op& op : out.ops) rewrite_square_root(out.ops, read, op);
  return out;
}

}  // namespace spmd::compiler
