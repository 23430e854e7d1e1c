// What the element-wise family (elementwise.cc) offers the other element-wise kinds and the
// compiler's passes: the shape rule they share, and its unary and binary kinds by function. Its
// operations are made through lax.h (unary, binary).
#pragma once

#include <memory>
#include <optional>

#include "jit/operation.h"
#include "kernels/elementwise.h"

namespace spmd::compiler {

// The shape element-wise operands make: the operands' of highest rank, which every other
// operand of positive rank must equal. Throws InvalidArgument naming `what` otherwise.
Shape elementwise_shape(std::string_view what, std::span<const ValueType> operands);

// The unary operation `fn` ("sqrt", "abs", …), as lax::unary binds it.
std::shared_ptr<const Operation> unary_operation(kernels::Unary fn);
// The function of a unary or binary element-wise operation; nothing for another kind.
std::optional<kernels::Unary> unary_of(const Operation& op);
std::optional<kernels::Binary> binary_of(const Operation& op);

// "multiply_add" (ops/multiply_add.cc): a × b + c rounded once, after flipping the signs `form`
// flags (kernels::MultiplyAddSign); float32 or float64 operands of one dtype.
std::shared_ptr<const Operation> multiply_add_operation(uint8_t form);

}  // namespace spmd::compiler
