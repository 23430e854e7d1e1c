#include "compute/ops/block_kernels.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "kernels/chain.h"
#include "kernels/elementwise.h"

namespace spmd::ops {

std::string describe(const Block& b) {
  return fmt::format("{}[{}]", dtype_name(b.dtype()), fmt::join(b.shape(), ", "));
}

void require_numeric(const char* what, const Block& b) {
  if (b.dtype() == DType::kBool) {
    throw InvalidArgument(fmt::format("{}: {} is not numeric", what, describe(b)));
  }
}

void require_floating(const char* what, const Block& b) {
  if (!is_floating(b.dtype())) {
    throw InvalidArgument(fmt::format("{}: needs a floating block, not {}", what, describe(b)));
  }
}

const kernels::Backend& backend_of(const Block& b) { return kernels::backend_of(b.memory()); }

namespace {

kernels::Input input_of(const Block& b) { return {b.bytes().data(), b.size()}; }

}  // namespace

Block unary(kernels::Unary op, const Block& a) {
  const kernels::ChainStep step{.kind = kernels::ChainStep::Kind::kUnary,
                                .fn = static_cast<uint8_t>(op),
                                .dtype = a.dtype(),
                                .result = a.dtype(),
                                .args = {kernels::chain_input(0)}};
  Block out = Block::allocate(a.dtype(), a.shape(), a.memory());
  const kernels::Input inputs[] = {input_of(a)};
  backend_of(a).chain({&step, 1}, inputs, out.mutable_bytes().data(), out.size());
  return out;
}

Block binary(kernels::Binary op, const Block& a, const Block& b) {
  const DType result = kernels::is_comparison(op) ? DType::kBool : a.dtype();
  const kernels::ChainStep step{.kind = kernels::ChainStep::Kind::kBinary,
                                .fn = static_cast<uint8_t>(op),
                                .dtype = a.dtype(),
                                .result = result,
                                .args = {kernels::chain_input(0), kernels::chain_input(1)}};
  Block out = Block::allocate(result, a.shape(), a.memory());
  const Block b_there = b.to_memory(a.memory());  // a block made on the host goes to a's device
  const kernels::Input inputs[] = {input_of(a), input_of(b_there)};
  backend_of(a).chain({&step, 1}, inputs, out.mutable_bytes().data(), out.size());
  return out;
}

Block broadcast_to(const Block& b, const Shape& shape) {
  if (b.shape() == shape) return b;
  Block out = Block::allocate(b.dtype(), shape, b.memory());
  backend_of(b).broadcast(dtype_size(b.dtype()), b.bytes().data(), b.shape(),
                          out.mutable_bytes().data(), shape);
  return out;
}

Block converted(const Block& b, DType to) {
  if (b.dtype() == to) return b;
  Block out = Block::allocate(to, b.shape(), b.memory());
  backend_of(b).convert(b.dtype(), to, input_of(b), out.mutable_bytes().data(), b.size());
  return out;
}

Block widened(const Block& b) {
  const bool half = b.dtype() == DType::kFloat16 || b.dtype() == DType::kBFloat16;
  return half ? converted(b, DType::kFloat32) : b;
}

Block with_scalar(kernels::Binary op, const Block& x, double s) {
  Block scalar = Block::allocate(x.dtype(), {}, x.memory());
  backend_of(x).fill(x.dtype(), s, scalar.mutable_bytes().data(), 1);
  return binary(op, x, scalar);
}

}  // namespace spmd::ops
