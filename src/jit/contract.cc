#include "jit/contract.h"

#include <algorithm>
#include <map>
#include <optional>
#include <vector>

#include "jit/ops/elementwise.h"
#include "jit/ops/reduction.h"
#include "kernels/chain.h"
#include "kernels/xla_sum.h"

namespace spmd::compiler {
namespace {

// Step s as a chain step (its kind and function), or nothing for a step that is not element-wise
// (a broadcast a chain reads in place).
std::optional<kernels::ChainStep> as_chain_step(const Step& s) {
  const auto* op = dynamic_cast<const ElementwiseOperation*>(s.operation.get());
  if (s.kind != StepKind::kCompute || op == nullptr) return std::nullopt;
  const std::vector<DType> operands(s.inputs.size(), s.dtype);
  return op->chain_step(operands, s.dtype);
}

bool float_binary(const std::optional<kernels::ChainStep>& c, kernels::Binary fn) {
  return c && c->kind == kernels::ChainStep::Kind::kBinary &&
         static_cast<kernels::Binary>(c->fn) == fn &&
         (c->dtype == DType::kFloat32 || c->dtype == DType::kFloat64) && c->result == c->dtype;
}

// Contracts the products of one chain's steps (`body`, whose last step's result is the chain's).
void contract_body(std::vector<Step>& body) {
  std::map<int, int> reads;        // slot -> readers inside the chain (the result: one more)
  std::map<int, size_t> producer;  // slot -> the body step writing it
  for (size_t k = 0; k < body.size(); ++k) {
    for (int in : body[k].inputs) ++reads[in];
    producer[body[k].output] = k;
  }
  ++reads[body.back().output];
  std::vector<bool> taken(body.size(), false);
  for (Step& s : body) {
    const std::optional<kernels::ChainStep> c = as_chain_step(s);
    const bool add = float_binary(c, kernels::Binary::kAdd);
    if (!add && !float_binary(c, kernels::Binary::kSub)) continue;
    for (size_t side = 0; side < 2; ++side) {
      const auto at = producer.find(s.inputs[side]);
      if (at == producer.end() || reads[s.inputs[side]] != 1) continue;
      const Step& product = body[at->second];
      if (!float_binary(as_chain_step(product), kernels::Binary::kMul) ||
          product.dtype != s.dtype || shape_size(product.shape) != shape_size(s.shape)) {
        continue;
      }
      const uint8_t form = add ? 0 : side == 0 ? kernels::kNegateAddend : kernels::kNegateProduct;
      s.inputs = {product.inputs[0], product.inputs[1], s.inputs[1 - side]};
      s.operation = multiply_add_operation(form);
      taken[at->second] = true;
      break;
    }
  }
  std::vector<Step> kept;
  for (size_t k = 0; k < body.size(); ++k) {
    if (!taken[k]) kept.push_back(std::move(body[k]));
  }
  body = std::move(kept);
}

// Whether XLA's code leaves the chain feeding the reduction that ends a kFusedReduce's `body`
// uncontracted: from kYnnReduceElements elements on, float32 and float64 alike, XLA hands the
// reduction and the work feeding it to YNNPACK, which fuses no multiply-add (measured: jax.jit
// of max(c - a * b) over either axis of a float64 64 × 1000 equals its eager value; of 4 × 900
// it is contracted).
bool by_ynnpack(const std::vector<Step>& body) {
  const Step& chained = body[body.size() - 2];
  return dynamic_cast<const ReduceOp*>(body.back().operation.get()) == nullptr ||
         shape_size(chained.shape) >= kernels::kYnnReduceElements;
}

}  // namespace

void contract_multiply_adds(LocalProgram& local) {
  for (Step& s : local.steps) {
    const bool chain = s.kind == StepKind::kFused || s.kind == StepKind::kPsumThen;
    const bool reduced = s.kind == StepKind::kFusedReduce && s.body.size() >= 2;
    if ((chain && !s.body.empty()) || (reduced && !by_ynnpack(s.body))) contract_body(s.body);
  }
}

}  // namespace spmd::compiler
