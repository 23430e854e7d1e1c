// Reverse-mode differentiation over a trace (grad.h): walks the operations recorded between the
// differentiated Tensors and the result backwards, appending each operation's vector-Jacobian
// product to the same trace, so that the backward program is partitioned and run
// like any other. Each operation's own derivative is its Operation::vjp (src/jit/ops/).
#pragma once

#include <optional>
#include <vector>

#include "jit/program.h"
#include "spmd/tensor.h"

namespace spmd::compiler {

// The cotangents of `inputs` (one per input of `op`, nullopt for an input that gets none) given
// the cotangent `g` of op's result `out`; `wanted` marks the inputs whose cotangents are used
// (Operation::vjp_wanted). Throws InvalidArgument for an operation without a derivative (integer
// and bool results).
Cotangents vjp_rule(const Op& op, const Tensor& out, const std::vector<Tensor>& inputs,
                    const Tensor& g, const std::vector<bool>& wanted);

// `g` summed down to `shape` (the inverse of NumPy broadcasting).
Tensor unbroadcast(const Tensor& g, const Shape& shape);

}  // namespace spmd::compiler
