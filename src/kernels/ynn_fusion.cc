#include "kernels/ynn_fusion.h"

#include <cstddef>

namespace spmd::kernels {
namespace {

// ynn_support.cc's element types for element-wise operations.
bool ynn_type(DType t) {
  return t == DType::kFloat64 || t == DType::kFloat32 || t == DType::kBFloat16 ||
         t == DType::kInt8 || t == DType::kUInt8;
}

// The HLO operations YNNPACK maps (GetYnnUnaryOpMap), spmd's kernels named by what XLA sees:
// logistic is expanded to exp, negate, add and divide before fusion; relu is a maximum; copy and
// stop_gradient leave no operation.
bool ynn_unary(Unary op) {
  switch (op) {
    case Unary::kNeg:
    case Unary::kExp:
    case Unary::kLog:
    case Unary::kTanh:
    case Unary::kSqrt:
    case Unary::kRsqrt:
    case Unary::kAbs:
    case Unary::kSign:
    case Unary::kCopy:
    case Unary::kStopGradient:
    case Unary::kRelu:
    case Unary::kLogistic:
    case Unary::kFloor:
    case Unary::kCeil:
    case Unary::kRoundEven:
    case Unary::kLog1p:
    case Unary::kExpm1:
    case Unary::kErf:
      return true;
    default:  // not, round half away from zero, sin, cos, tan, erfc, cbrt, lgamma, digamma, erf_inv
      return false;
  }
}

// GetYnnBinaryOpMap.
bool ynn_binary(Binary op) {
  switch (op) {
    case Binary::kAdd:
    case Binary::kSub:
    case Binary::kMul:
    case Binary::kDiv:
    case Binary::kPow:
    case Binary::kMax:
    case Binary::kMin:
      return true;
    default:
      return false;
  }
}

// Whether step `k` reads step `earlier`'s result.
bool reads(const ChainStep& step, size_t earlier) {
  for (int i = 0; i < arity(step.kind); ++i) {
    if (step.args[static_cast<size_t>(i)] == chain_result(static_cast<int>(earlier))) return true;
  }
  return false;
}

}  // namespace

bool ynn_supports(const ChainStep& step) {
  if (!ynn_type(step.dtype) || !ynn_type(step.result)) return false;
  switch (step.kind) {
    case ChainStep::Kind::kUnary:
      return ynn_unary(static_cast<Unary>(step.fn));
    case ChainStep::Kind::kBinary:
      return ynn_binary(static_cast<Binary>(step.fn));
    case ChainStep::Kind::kConvert:
      return true;
    case ChainStep::Kind::kSelect:
    case ChainStep::Kind::kMultiplyAdd:  // YNNPACK's kernels fuse no multiply-add
      return false;
  }
  return false;
}

uint64_t ynn_fused_steps(std::span<const ChainStep> steps) {
  uint64_t fused = 0;
  for (size_t k = steps.size(); k-- > 0;) {
    bool inside = ynn_supports(steps[k]);
    for (size_t j = k + 1; inside && j < steps.size(); ++j) {
      if (reads(steps[j], k) && (fused >> j & 1u) == 0) inside = false;
    }
    if (inside) fused |= uint64_t{1} << k;
  }
  return fused;
}

}  // namespace spmd::kernels
